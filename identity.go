package ksa

// Keys of the user "extra" values Kubernetes derives from a service-account
// token (see [Identity.UserInfo]).
const (
	ExtraPodName      = "authentication.kubernetes.io/pod-name"
	ExtraPodUID       = "authentication.kubernetes.io/pod-uid"
	ExtraNodeName     = "authentication.kubernetes.io/node-name"
	ExtraNodeUID      = "authentication.kubernetes.io/node-uid"
	ExtraCredentialID = "authentication.kubernetes.io/credential-id"
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
// node (name when known, UID only together with the name).
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
	return info
}
