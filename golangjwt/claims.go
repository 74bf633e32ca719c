package golangjwt

import (
	"fmt"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/tokens"
)

// Claims are a bound service-account token's claims for
// jwt.ParseWithClaims: the registered claims and Kubernetes' private
// kubernetes.io claim. Its Validate method, which jwt calls after checking
// the times, issuer and audience, requires what ksa's validator requires
// of a bound token: the kubernetes.io claim with a namespace and service
// account, a subject that is that account's username, an issued-at time.
type Claims struct {
	jwt.RegisteredClaims
	Kubernetes *KubernetesClaims `json:"kubernetes.io,omitempty"`
}

// KubernetesClaims is the kubernetes.io claim.
type KubernetesClaims struct {
	Namespace      string     `json:"namespace"`
	ServiceAccount *ObjectRef `json:"serviceaccount,omitempty"`
	Pod            *ObjectRef `json:"pod,omitempty"`
	Secret         *ObjectRef `json:"secret,omitempty"`
	Node           *ObjectRef `json:"node,omitempty"`
	// WarnAfter is when a token whose expiry kube-apiserver extended
	// becomes stale.
	WarnAfter *jwt.NumericDate `json:"warnafter,omitempty"`
}

// ObjectRef names an object of the kubernetes.io claim.
type ObjectRef struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// Validate checks the claims jwt leaves to the application. The error
// matches tokens.ErrMissingClaim (a claim absent) or tokens.ErrMalformed (a
// subject that is not the service account's username).
func (c *Claims) Validate() error {
	missing := func(claim string) error {
		return errs.Wrap(prefix, tokens.ErrMissingClaim, "claim "+claim+" is missing", nil)
	}
	k := c.Kubernetes
	switch {
	case k == nil:
		return missing("kubernetes.io")
	case k.Namespace == "":
		return missing("kubernetes.io.namespace")
	case k.ServiceAccount == nil || k.ServiceAccount.Name == "" || k.ServiceAccount.UID == "":
		return missing("kubernetes.io.serviceaccount")
	case c.IssuedAt == nil:
		return missing("iat")
	case !ksa.MatchesUsername(k.Namespace, k.ServiceAccount.Name, c.Subject):
		return errs.Wrap(prefix, tokens.ErrMalformed, fmt.Sprintf("claim sub %q is not the username of service account %s/%s", c.Subject, k.Namespace, k.ServiceAccount.Name), nil)
	}
	return nil
}

// Identity is what the token proves, as ksa's validator reports it: the
// service account, the pod and node it is bound to, and the credential ID
// of its jti. Call it on validated claims only.
func (c *Claims) Identity() ksa.Identity {
	var id ksa.Identity
	k := c.Kubernetes
	if k == nil {
		return id
	}
	ref := func(r *ObjectRef) ksa.ObjectRef {
		if r == nil {
			return ksa.ObjectRef{}
		}
		return ksa.ObjectRef{Name: r.Name, UID: r.UID}
	}
	sa := ref(k.ServiceAccount)
	id.ServiceAccount = ksa.ServiceAccount{Namespace: k.Namespace, Name: sa.Name, UID: sa.UID}
	id.Pod = ref(k.Pod)
	id.Node = ref(k.Node)
	id.CredentialID = ksa.CredentialID(c.ID)
	return id
}
