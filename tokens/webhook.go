package tokens

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/ksa-go/ksa"
)

// The names of the claims of tokens bound to a webhook configuration
// (Kubernetes 1.37, alpha, feature gate APIServerWebhookAuthenticationToken;
// KEP-6060). They are the names kube-apiserver v1.37.2 writes; the KEP
// still proposes others, so this is the one place a rename is made. They
// sort as kube-apiserver writes them among the other members of
// "kubernetes.io" (TestWebhookClaimOrder holds it).
const (
	// ClaimValidatingWebhookConfiguration is the member of "kubernetes.io"
	// naming the ValidatingWebhookConfiguration a token is bound to:
	// {"name":...,"uid":...}.
	ClaimValidatingWebhookConfiguration = "validatingwebhookconfiguration"
	// ClaimMutatingWebhookConfiguration is the member naming the
	// MutatingWebhookConfiguration a token is bound to.
	ClaimMutatingWebhookConfiguration = "mutatingwebhookconfiguration"
	// ClaimAttestations is the member holding what kube-apiserver attested
	// at TokenRequest time: an object of string arrays.
	ClaimAttestations = "attestations"
	// AttestationAdmissionReviewAPIGroups is the one attestation Kubernetes
	// defines: the API group ("*" for all) of the AdmissionReviews the
	// bearer may send the webhook, one value.
	AttestationAdmissionReviewAPIGroups = "admissionReviewAPIGroups"
)

// WebhookExpirationSeconds is the lifetime of every webhook-bound token:
// kube-apiserver shortens longer requests to it, silently, and (as for every
// token) refuses shorter ones.
const WebhookExpirationSeconds = 10 * 60

// AllAPIGroups, as the attested API group, lets the bearer ask a webhook
// about resources of any group. kube-apiserver asks for it for itself.
const AllAPIGroups = "*"

// The kinds of the webhook configurations a token can be bound to, in API
// group admissionregistration.k8s.io, version v1.
const (
	BoundValidatingWebhookConfiguration BoundKind = "ValidatingWebhookConfiguration"
	BoundMutatingWebhookConfiguration   BoundKind = "MutatingWebhookConfiguration"
)

// The kinds of the webhook configurations, as an [ObjectGetter] is asked
// for them (cluster-scoped: the namespace is empty).
const (
	KindValidatingWebhookConfiguration ObjectKind = "ValidatingWebhookConfiguration"
	KindMutatingWebhookConfiguration   ObjectKind = "MutatingWebhookConfiguration"
)

// IsWebhook reports whether k is one of the webhook configuration kinds.
func (k BoundKind) IsWebhook() bool {
	return k == BoundValidatingWebhookConfiguration || k == BoundMutatingWebhookConfiguration
}

// WebhookBinding returns the kind and reference of the webhook
// configuration the claims are bound to; ok is false for any other token.
func (k *KubernetesClaims) WebhookBinding() (kind BoundKind, ref ksa.ObjectRef, ok bool) {
	switch {
	case k == nil:
		return "", ksa.ObjectRef{}, false
	case k.ValidatingWebhookConfiguration != nil:
		return BoundValidatingWebhookConfiguration, *k.ValidatingWebhookConfiguration, true
	case k.MutatingWebhookConfiguration != nil:
		return BoundMutatingWebhookConfiguration, *k.MutatingWebhookConfiguration, true
	}
	return "", ksa.ObjectRef{}, false
}

// AdmissionReviewAPIGroup returns the one attested API group of a
// webhook-bound token ("*" for all); ok is false when the attestation is
// absent or does not hold exactly one value.
func (k *KubernetesClaims) AdmissionReviewAPIGroup() (string, bool) {
	if k == nil {
		return "", false
	}
	v := k.Attestations[AttestationAdmissionReviewAPIGroups]
	if len(v) != 1 {
		return "", false
	}
	return v[0], true
}

// DescribeWebhook explains, in a sentence, what a webhook-bound token is
// for: the configuration it is bound to and the API group kube-apiserver
// attested. It is "" for any other token. The names are the token's,
// unescaped: a program printing them to a terminal escapes them.
func (k *KubernetesClaims) DescribeWebhook() string {
	kind, ref, ok := k.WebhookBinding()
	if !ok {
		return ""
	}
	about := "no API group (the attestation is missing or holds several)"
	if g, ok := k.AdmissionReviewAPIGroup(); ok {
		switch g {
		case AllAPIGroups:
			about = "resources of any API group"
		case "":
			about = "no API group (the attested group is empty)"
		default:
			about = "resources of API group " + strconv.Quote(g)
		}
	}
	return fmt.Sprintf("for calling the admission webhooks of %s %q (uid %q), whose URL is the audience, with AdmissionReviews about %s (Kubernetes 1.37, alpha)",
		kind, ref.Name, ref.UID, about)
}

// checkWebhookClaims holds a bound token's webhook binding to what
// kube-apiserver mints, stricter than its validator (which only asks for a
// non-empty attestation): one binding, never beside a pod, secret or node;
// exactly the one attestation, with one valid group; attestations on no
// other token.
func checkWebhookClaims(k *KubernetesClaims) error {
	_, ref, webhook := k.WebhookBinding()
	if !webhook {
		if k.Attestations != nil {
			return invalidClaim(claimKubernetes+"."+ClaimAttestations, "is only written into tokens bound to a webhook configuration")
		}
		return nil
	}
	switch {
	case k.ValidatingWebhookConfiguration != nil && k.MutatingWebhookConfiguration != nil:
		return invalidClaim(claimKubernetes, "binds the token to both a validating and a mutating webhook configuration")
	case k.Pod != nil || k.Secret != nil || k.Node != nil:
		return invalidClaim(claimKubernetes, "binds the token to a webhook configuration and to a pod, secret or node")
	case !ksa.IsObjectName(ref.Name) || ref.UID == "":
		return invalidClaim(claimKubernetes, "names a webhook configuration without a valid name and UID")
	case len(k.Attestations) == 0:
		return claimError(claimKubernetes+"."+ClaimAttestations+"."+AttestationAdmissionReviewAPIGroups, "is missing")
	case len(k.Attestations) != 1:
		return invalidClaim(claimKubernetes+"."+ClaimAttestations, "holds attestations other than "+AttestationAdmissionReviewAPIGroups)
	}
	group, ok := k.AdmissionReviewAPIGroup()
	if !ok {
		if _, present := k.Attestations[AttestationAdmissionReviewAPIGroups]; !present {
			return invalidClaim(claimKubernetes+"."+ClaimAttestations, "holds attestations other than "+AttestationAdmissionReviewAPIGroups)
		}
		return invalidClaim(claimKubernetes+"."+ClaimAttestations+"."+AttestationAdmissionReviewAPIGroups, "must hold exactly one API group")
	}
	if !validAttestedGroup(group) {
		return invalidClaim(claimKubernetes+"."+ClaimAttestations+"."+AttestationAdmissionReviewAPIGroups, "is not \"*\" or an API group name")
	}
	return nil
}

// validAttestedGroup applies TokenRequest's rule: "*", or a DNS-1123
// subdomain (never empty: the core group cannot be attested alone).
func validAttestedGroup(g string) bool { return g == AllAPIGroups || ksa.IsObjectName(g) }

// checkWebhookRequest applies TokenRequest's rules to a request for a
// webhook-bound token: exactly one audience, none of the API audiences, the
// one admissionReviewAPIGroups attestation with one valid group.
func checkWebhookRequest(r *Request, apiAuds []string) error {
	if len(r.Audiences) != 1 {
		return &RequestError{Field: "spec.audiences", Reason: "must be length 1 when bound to a webhook config"}
	}
	if slices.Contains(apiAuds, r.Audiences[0]) {
		return &RequestError{Field: "spec.audiences", Reason: "api server audiences are invalid for webhook token requests"}
	}
	if len(r.Attestations) != 1 {
		return &RequestError{Field: "spec.attestations", Reason: "webhook bound requests require exactly one " + AttestationAdmissionReviewAPIGroups + " attestation"}
	}
	v, ok := r.Attestations[AttestationAdmissionReviewAPIGroups]
	switch {
	case !ok:
		return &RequestError{Field: "spec.attestations", Reason: "supported values: " + AttestationAdmissionReviewAPIGroups}
	case len(v) != 1:
		return &RequestError{Field: "spec.attestations[" + AttestationAdmissionReviewAPIGroups + "]", Reason: "must specify a single value"}
	case v[0] == "":
		return &RequestError{Field: "spec.attestations[" + AttestationAdmissionReviewAPIGroups + "][0]", Reason: "may not be an empty string"}
	case !validAttestedGroup(v[0]):
		return &RequestError{Field: "spec.attestations[" + AttestationAdmissionReviewAPIGroups + "][0]", Reason: "must specify a valid API Group"}
	}
	return nil
}
