package ksa

import "slices"

// Keys of the user "extra" values Kubernetes derives from a service-account
// token (see [Identity.UserInfo]).
const (
	ExtraPodName      = "authentication.kubernetes.io/pod-name"
	ExtraPodUID       = "authentication.kubernetes.io/pod-uid"
	ExtraNodeName     = "authentication.kubernetes.io/node-name"
	ExtraNodeUID      = "authentication.kubernetes.io/node-uid"
	ExtraCredentialID = "authentication.kubernetes.io/credential-id"
	// The webhook configuration a token for an admission webhook is bound
	// to (Kubernetes 1.37, alpha), and the API group kube-apiserver attested
	// the bearer may ask the webhook about.
	ExtraValidatingWebhookConfigurationName = "authentication.kubernetes.io/validatingwebhookconfiguration-name"
	ExtraValidatingWebhookConfigurationUID  = "authentication.kubernetes.io/validatingwebhookconfiguration-uid"
	ExtraMutatingWebhookConfigurationName   = "authentication.kubernetes.io/mutatingwebhookconfiguration-name"
	ExtraMutatingWebhookConfigurationUID    = "authentication.kubernetes.io/mutatingwebhookconfiguration-uid"
	ExtraAdmissionReviewAPIGroups           = "attestation.authentication.kubernetes.io/admissionReviewAPIGroups"
)

// CredentialIDPrefix starts the credential ID Kubernetes derives from a
// token's jti claim: JTI=<jti>.
const CredentialIDPrefix = "JTI="

// CredentialID returns the credential ID Kubernetes records for a token with
// the given jti ("JTI=<jti>"), or "" for an empty jti.
func CredentialID(jti string) string {
	if jti == "" {
		return ""
	}
	return CredentialIDPrefix + jti
}

// ObjectRef names an object a token is bound to, or the node a pod runs on.
// UID may be empty where Kubernetes leaves it out (the node of a pod whose
// Node object was not found).
type ObjectRef struct {
	Name string
	UID  string
}

// IsZero reports whether neither name nor UID is set.
func (r ObjectRef) IsZero() bool { return r.Name == "" && r.UID == "" }

// Identity is everything a workload credential proves: the service account,
// and where the credential carries them, the pod and node it was issued to
// and the credential's own ID.
type Identity struct {
	ServiceAccount ServiceAccount
	Pod            ObjectRef
	Node           ObjectRef
	// CredentialID is "JTI=<jti>" for tokens that carry a jti.
	CredentialID string
	// ValidatingWebhookConfiguration or MutatingWebhookConfiguration is the
	// webhook configuration a token for admission webhooks is bound to
	// (Kubernetes 1.37, alpha); zero otherwise.
	ValidatingWebhookConfiguration ObjectRef
	MutatingWebhookConfiguration   ObjectRef
	// AdmissionReviewAPIGroups is what kube-apiserver attested in such a
	// token: the one API group ("*" for all) of the AdmissionReviews its
	// bearer may send the webhook. Nil otherwise.
	AdmissionReviewAPIGroups []string
}

// UserInfo is the user Kubernetes authenticates a credential as, in the shape
// of k8s.io/apiserver's user.Info. The group system:authenticated is not
// included: kube-apiserver adds it outside the service-account
// authenticator.
type UserInfo struct {
	Username string
	UID      string
	Groups   []string
	// Extra is nil when there is nothing to put in it, as in Kubernetes.
	Extra map[string][]string
}

// UserInfo derives the user as Kubernetes' ServiceAccountInfo.UserInfo does:
// the username and groups of the service account, its UID, and extras for the
// pod (only when both name and UID are known), the credential ID, and the
// node (name when known, UID only together with the name), a webhook
// configuration (name and UID together) and the attested API groups.
func (id Identity) UserInfo() UserInfo {
	sa := id.ServiceAccount
	info := UserInfo{Username: sa.Username(), UID: sa.UID, Groups: sa.Groups()}
	set := func(key, value string) {
		if info.Extra == nil {
			info.Extra = make(map[string][]string, 4)
		}
		info.Extra[key] = []string{value}
	}
	if id.Pod.Name != "" && id.Pod.UID != "" {
		set(ExtraPodName, id.Pod.Name)
		set(ExtraPodUID, id.Pod.UID)
	}
	if id.CredentialID != "" {
		set(ExtraCredentialID, id.CredentialID)
	}
	if id.Node.Name != "" {
		set(ExtraNodeName, id.Node.Name)
		if id.Node.UID != "" {
			set(ExtraNodeUID, id.Node.UID)
		}
	}
	if w := id.ValidatingWebhookConfiguration; w.Name != "" && w.UID != "" {
		set(ExtraValidatingWebhookConfigurationName, w.Name)
		set(ExtraValidatingWebhookConfigurationUID, w.UID)
	}
	if w := id.MutatingWebhookConfiguration; w.Name != "" && w.UID != "" {
		set(ExtraMutatingWebhookConfigurationName, w.Name)
		set(ExtraMutatingWebhookConfigurationUID, w.UID)
	}
	if len(id.AdmissionReviewAPIGroups) > 0 {
		if info.Extra == nil {
			info.Extra = make(map[string][]string, 3)
		}
		info.Extra[ExtraAdmissionReviewAPIGroups] = slices.Clone(id.AdmissionReviewAPIGroups)
	}
	return info
}
