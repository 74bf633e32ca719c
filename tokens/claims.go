package tokens

import (
	"slices"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/jsonx"
)

// LegacyIssuer is the issuer of legacy Secret-based service-account tokens.
const LegacyIssuer = "kubernetes/serviceaccount"

// Claims is the payload of a service-account token. Times are whole
// seconds; a zero time.Time means the claim is absent. Unknown claims are
// not kept.
type Claims struct {
	Issuer    string    // iss
	Subject   string    // sub
	Audience  []string  // aud; always written as an array
	Expiry    time.Time // exp
	NotBefore time.Time // nbf
	IssuedAt  time.Time // iat
	ID        string    // jti
	// Kubernetes is the private "kubernetes.io" claim of bound tokens.
	Kubernetes *KubernetesClaims
	// Legacy holds the flat claims of Secret-based tokens.
	Legacy *LegacyClaims
}

// KubernetesClaims is the "kubernetes.io" claim of a bound token.
type KubernetesClaims struct {
	Namespace      string
	ServiceAccount ksa.ObjectRef
	// Pod, Secret and Node are the objects the token is bound to; a pod-bound
	// token also names the pod's node. Nil when absent.
	Pod    *ksa.ObjectRef
	Secret *ksa.ObjectRef
	Node   *ksa.ObjectRef
	// ValidatingWebhookConfiguration or MutatingWebhookConfiguration is the
	// webhook configuration a token for admission webhooks is bound to
	// (Kubernetes 1.37, alpha); nil otherwise. See [ClaimAttestations].
	ValidatingWebhookConfiguration *ksa.ObjectRef
	MutatingWebhookConfiguration   *ksa.ObjectRef
	// Attestations are what kube-apiserver attested for a webhook-bound
	// token: [AttestationAdmissionReviewAPIGroups] and its one API group.
	// Nil when absent.
	Attestations map[string][]string
	// WarnAfter is when a token whose expiry was extended becomes stale;
	// zero when absent.
	WarnAfter time.Time
}

// LegacyClaims are the claims of a legacy Secret-based token, written flat
// under kubernetes.io/serviceaccount/.
type LegacyClaims struct {
	Namespace          string
	SecretName         string
	ServiceAccountName string
	ServiceAccountUID  string
}

// Names of the registered and Kubernetes claims.
const (
	claimAud        = "aud"
	claimExp        = "exp"
	claimIat        = "iat"
	claimIss        = "iss"
	claimJti        = "jti"
	claimNbf        = "nbf"
	claimSub        = "sub"
	claimKubernetes = "kubernetes.io"

	legacyNamespace = "kubernetes.io/serviceaccount/namespace"
	legacySecret    = "kubernetes.io/serviceaccount/secret.name"
	legacySAName    = "kubernetes.io/serviceaccount/service-account.name"
	legacySAUID     = "kubernetes.io/serviceaccount/service-account.uid"
)

// AppendJSON appends the claims as kube-apiserver writes them: members
// sorted by name (the order go-jose's builder produces), empty claims left
// out, aud always an array, times as integers, strings escaped as go-jose
// escapes them. For the same claims the bytes equal kube-apiserver's.
func (c *Claims) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	n := 0
	member := func(name string) {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendKey(dst, name)
		n++
	}
	date := func(name string, t time.Time) {
		if !t.IsZero() {
			member(name)
			dst = jsonx.AppendInt(dst, t.Unix())
		}
	}
	str := func(name, v string) {
		if v != "" {
			member(name)
			dst = jsonx.AppendString(dst, v)
		}
	}
	if len(c.Audience) > 0 {
		member(claimAud)
		dst = jsonx.AppendStrings(dst, c.Audience)
	}
	date(claimExp, c.Expiry)
	date(claimIat, c.IssuedAt)
	str(claimIss, c.Issuer)
	str(claimJti, c.ID)
	if k := c.Kubernetes; k != nil {
		member(claimKubernetes)
		dst = k.appendJSON(dst)
	}
	if l := c.Legacy; l != nil {
		// Legacy claims have no omitempty: always written.
		for _, kv := range [...][2]string{
			{legacyNamespace, l.Namespace},
			{legacySecret, l.SecretName},
			{legacySAName, l.ServiceAccountName},
			{legacySAUID, l.ServiceAccountUID},
		} {
			member(kv[0])
			dst = jsonx.AppendString(dst, kv[1])
		}
	}
	date(claimNbf, c.NotBefore)
	str(claimSub, c.Subject)
	return append(dst, '}')
}

func (k *KubernetesClaims) appendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	comma := false
	sep := func() {
		if comma {
			dst = append(dst, ',')
		}
		comma = true
	}
	ref := func(name string, r *ksa.ObjectRef) {
		if r == nil {
			return
		}
		sep()
		dst = jsonx.AppendKey(dst, name)
		dst = appendRef(dst, *r)
	}
	// Members in name order, as go-jose writes them
	// (TestWebhookClaimOrder holds it).
	if len(k.Attestations) > 0 {
		sep()
		dst = jsonx.AppendKey(dst, ClaimAttestations)
		dst = appendAttestations(dst, k.Attestations)
	}
	ref(ClaimMutatingWebhookConfiguration, k.MutatingWebhookConfiguration)
	if k.Namespace != "" {
		sep()
		dst = jsonx.AppendKey(dst, "namespace")
		dst = jsonx.AppendString(dst, k.Namespace)
	}
	ref("node", k.Node)
	ref("pod", k.Pod)
	ref("secret", k.Secret)
	sa := k.ServiceAccount
	ref("serviceaccount", &sa)
	ref(ClaimValidatingWebhookConfiguration, k.ValidatingWebhookConfiguration)
	if !k.WarnAfter.IsZero() {
		sep()
		dst = jsonx.AppendKey(dst, "warnafter")
		dst = jsonx.AppendInt(dst, k.WarnAfter.Unix())
	}
	return append(dst, '}')
}

// appendAttestations writes the attestations as go-jose does a
// map[string][]string: keys sorted, a nil value as null.
func appendAttestations(dst []byte, a map[string][]string) []byte {
	keys := make([]string, 0, len(a))
	for key := range a {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, key := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendKey(dst, key)
		if a[key] == nil {
			dst = append(dst, "null"...)
		} else {
			dst = jsonx.AppendStrings(dst, a[key])
		}
	}
	return append(dst, '}')
}

func appendRef(dst []byte, r ksa.ObjectRef) []byte {
	dst = append(dst, '{')
	if r.Name != "" {
		dst = jsonx.AppendKey(dst, "name")
		dst = jsonx.AppendString(dst, r.Name)
	}
	if r.UID != "" {
		if r.Name != "" {
			dst = append(dst, ',')
		}
		dst = jsonx.AppendKey(dst, "uid")
		dst = jsonx.AppendString(dst, r.UID)
	}
	return append(dst, '}')
}

// MarshalJSON returns [Claims.AppendJSON] of the claims.
func (c *Claims) MarshalJSON() ([]byte, error) {
	return c.AppendJSON(make([]byte, 0, 512)), nil
}

// Identity returns who a bound token's claims name: the service account
// (namespace, name, UID), the pod and node, the credential ID from jti, and
// a webhook-bound token's configuration and attested API groups.
// For legacy claims only the service account is set.
func (c *Claims) Identity() ksa.Identity {
	var id ksa.Identity
	switch {
	case c.Kubernetes != nil:
		k := c.Kubernetes
		id.ServiceAccount = ksa.ServiceAccount{Namespace: k.Namespace, Name: k.ServiceAccount.Name, UID: k.ServiceAccount.UID}
		if k.Pod != nil {
			id.Pod = *k.Pod
		}
		if k.Node != nil {
			id.Node = *k.Node
		}
		id.CredentialID = ksa.CredentialID(c.ID)
		if k.ValidatingWebhookConfiguration != nil {
			id.ValidatingWebhookConfiguration = *k.ValidatingWebhookConfiguration
		}
		if k.MutatingWebhookConfiguration != nil {
			id.MutatingWebhookConfiguration = *k.MutatingWebhookConfiguration
		}
		if _, _, ok := k.WebhookBinding(); ok {
			id.AdmissionReviewAPIGroups = k.Attestations[AttestationAdmissionReviewAPIGroups]
		}
	case c.Legacy != nil:
		l := c.Legacy
		id.ServiceAccount = ksa.ServiceAccount{Namespace: l.Namespace, Name: l.ServiceAccountName, UID: l.ServiceAccountUID}
	}
	return id
}
