package tokens

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/ksa-go/ksa"
)

// TokenRequest limits and the warnafter extension, as in kube-apiserver.
const (
	// DefaultExpirationSeconds is the lifetime of a token when the request
	// gives none.
	DefaultExpirationSeconds = 3600
	// MinExpirationSeconds is the shortest lifetime a request may ask for.
	MinExpirationSeconds = 10 * 60
	// MaxExpirationSeconds is the longest lifetime a request may ask for.
	MaxExpirationSeconds = 1 << 32
	// WarnOnlyExpirationSeconds is the lifetime (one hour and seven seconds)
	// that, for a pod-bound token for API audiences, triggers the extension
	// to MaxExtendedExpiration with a warnafter claim: the lifetime the
	// kube-api-access projected volume asks for.
	WarnOnlyExpirationSeconds = 60*60 + 7
	// DefaultMaxExtendedExpiration is the lifetime kube-apiserver gives
	// extended tokens by default (its MaxExtendedExpiration): one year.
	DefaultMaxExtendedExpiration = 24 * 365 * time.Hour
)

// BoundKind is the kind of object a token is bound to.
type BoundKind string

// The kinds a token can be bound to (and the webhook configurations,
// [BoundValidatingWebhookConfiguration] and
// [BoundMutatingWebhookConfiguration]).
const (
	BoundPod    BoundKind = "Pod"
	BoundSecret BoundKind = "Secret"
	BoundNode   BoundKind = "Node"
)

// BoundObject is the object a token is bound to: the token stops working
// when the object is deleted. Name and UID are both required: the minter
// does not look objects up, so the caller supplies the live UID.
type BoundObject struct {
	Kind BoundKind
	Name string
	UID  string
}

// Request asks for a token, with TokenRequest's semantics.
type Request struct {
	// ServiceAccount is the account the token is for; namespace, name and
	// UID are all required.
	ServiceAccount ksa.ServiceAccount
	// Audiences the token is for; empty means the minter's API audiences.
	Audiences []string
	// ExpirationSeconds is the requested lifetime; zero means
	// DefaultExpirationSeconds. It must lie in [MinExpirationSeconds,
	// MaxExpirationSeconds].
	ExpirationSeconds int64
	// BoundObject binds the token to a pod, secret, node or webhook
	// configuration; nil for none. A token bound to a webhook
	// configuration needs exactly one audience (the webhook's URL, see
	// admissionauth), none of the API audiences, and Attestations; its
	// lifetime is [WebhookExpirationSeconds].
	BoundObject *BoundObject
	// Node is the node a bound pod runs on, written into the token as
	// kube-apiserver does (UID may be empty when the Node was not found).
	// Only valid with a pod binding.
	Node *ksa.ObjectRef
	// Attestations are what the token's claims attest: only for a webhook
	// binding, exactly {AttestationAdmissionReviewAPIGroups: {group}} with
	// group "*" (AllAPIGroups) or an API group name. Like kube-apiserver's
	// TokenRequest, the minter checks the shape; the authorization to
	// attest and the match with the configuration's webhooks are the
	// caller's.
	Attestations map[string][]string
}

// check applies the TokenRequest validation rules and returns the requested
// lifetime in seconds.
func (r *Request) check() (int64, error) {
	if err := r.ServiceAccount.Check(); err != nil {
		return 0, &RequestError{Field: "serviceAccount", Err: err}
	}
	if r.ServiceAccount.UID == "" {
		return 0, &RequestError{Field: "serviceAccount.uid", Reason: "is required"}
	}
	exp := r.ExpirationSeconds
	if exp == 0 {
		exp = DefaultExpirationSeconds
	}
	if exp < MinExpirationSeconds {
		return 0, &RequestError{Field: "spec.expirationSeconds", Reason: "may not specify a duration less than 10 minutes"}
	}
	if exp > MaxExpirationSeconds {
		return 0, &RequestError{Field: "spec.expirationSeconds", Reason: "may not specify a duration larger than 2^32 seconds"}
	}
	if b := r.BoundObject; b != nil {
		switch b.Kind {
		case BoundPod, BoundSecret, BoundNode, BoundValidatingWebhookConfiguration, BoundMutatingWebhookConfiguration:
		default:
			return 0, &RequestError{Field: "spec.boundObjectRef", Reason: fmt.Sprintf("cannot bind token to object of type %s", b.Kind)}
		}
		if b.Name == "" || b.UID == "" {
			return 0, &RequestError{Field: "spec.boundObjectRef", Reason: "name and uid are required"}
		}
		if r.Node != nil && b.Kind != BoundPod {
			return 0, &RequestError{Field: "spec.boundObjectRef", Reason: "internal error, token can only be bound to one object type"}
		}
	} else if r.Node != nil {
		return 0, &RequestError{Field: "node", Reason: "node information is only written into pod-bound tokens"}
	}
	if r.BoundObject == nil || !r.BoundObject.Kind.IsWebhook() {
		if len(r.Attestations) != 0 {
			return 0, &RequestError{Field: "spec.attestations", Reason: "attestations may only be specified with a webhook bound object reference"}
		}
	}
	if r.Node != nil && r.Node.Name == "" {
		return 0, &RequestError{Field: "node.name", Reason: "is required"}
	}
	for _, a := range r.Audiences {
		if a == "" {
			return 0, &RequestError{Field: "spec.audiences", Reason: "audiences may not be empty strings"}
		}
		if !utf8.ValidString(a) {
			return 0, &RequestError{Field: "spec.audiences", Reason: "audiences must be valid UTF-8"}
		}
	}
	// Names are DNS names; UIDs are free-form but must survive JSON
	// unchanged (invalid UTF-8 would be rewritten to U+FFFD).
	uids := []string{r.ServiceAccount.UID}
	if b := r.BoundObject; b != nil {
		uids = append(uids, b.UID, b.Name)
	}
	for key, vals := range r.Attestations {
		uids = append(uids, key)
		uids = append(uids, vals...)
	}
	if n := r.Node; n != nil {
		uids = append(uids, n.Name, n.UID)
	}
	for _, u := range uids {
		if !utf8.ValidString(u) {
			return 0, &RequestError{Field: "uid", Reason: "names and UIDs must be valid UTF-8"}
		}
	}
	return exp, nil
}
