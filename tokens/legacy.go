package tokens

import (
	"context"
	"crypto/subtle"
	"fmt"
	"time"

	"github.com/ksa-go/ksa"
)

// LegacyConfig opts in to legacy Secret-based tokens (issuer
// kubernetes/serviceaccount, no audience, no expiry), which Kubernetes
// stopped creating automatically in 1.24. Deleting its Secret is the only
// way to revoke such a token, so with an object getter the Secret is
// checked by default, as kube-apiserver's --service-account-lookup does.
type LegacyConfig struct {
	// Accept validates legacy tokens: signature and the claims'
	// consistency and, with the validator's Objects getter, the Secret
	// (it must exist, hold exactly this token, and carry no
	// kubernetes.io/legacy-token-invalid-since label) and the service
	// account. The getter must then implement LegacySecretGetter.
	Accept bool
	// InsecureSkipSecretCheck checks the service account but not the
	// Secret: a token stays valid after its Secret is deleted, which is
	// the only way to revoke it.
	InsecureSkipSecretCheck bool
}

// LegacySecret is what legacy validation needs to know of a token Secret.
type LegacySecret struct {
	UID string
	// Token is data["token"] of the secret.
	Token []byte
	// DeletionTimestamp is set once the secret is being deleted.
	DeletionTimestamp time.Time
	// InvalidSince is the value of the label
	// kubernetes.io/legacy-token-invalid-since, if any.
	InvalidSince string
}

// LegacyInvalidSinceLabel marks a legacy token secret as no longer valid.
const LegacyInvalidSinceLabel = "kubernetes.io/legacy-token-invalid-since"

// LegacySecretGetter is implemented by object getters that can serve legacy
// token checks.
type LegacySecretGetter interface {
	GetLegacySecret(ctx context.Context, namespace, name string) (LegacySecret, error)
}

// checkLegacy runs Kubernetes' legacy validator, in its order.
func (v *Validator) checkLegacy(ctx context.Context, c *Claims, token string) error {
	l := c.Legacy
	if c.Kubernetes != nil {
		// Only the flat claims are checked on this path: a kubernetes.io
		// claim beside them could name anyone.
		return legacyError("legacy token also carries a kubernetes.io claim", false, nil)
	}
	missing := func(what string) error { return legacyError(what+" claim is missing", false, nil) }
	switch {
	case c.Subject == "":
		return missing("sub")
	case l == nil || l.Namespace == "":
		return missing("namespace")
	case l.SecretName == "":
		return missing("secretName")
	case l.ServiceAccountName == "":
		return missing("serviceAccountName")
	case l.ServiceAccountUID == "":
		return missing("serviceAccountUID")
	}
	sa, err := ksa.ParseUsername(c.Subject)
	if err != nil || sa.Namespace != l.Namespace || sa.Name != l.ServiceAccountName {
		return legacyError("sub claim is invalid", false, err)
	}
	if v.objects == nil {
		return nil
	}
	if !v.legacy.InsecureSkipSecretCheck {
		secret, err := v.objects.(LegacySecretGetter).GetLegacySecret(ctx, l.Namespace, l.SecretName)
		if err != nil {
			return legacyError("Token has been invalidated", true, err)
		}
		if !secret.DeletionTimestamp.IsZero() {
			return legacyError("Token has been invalidated", true, nil)
		}
		if subtle.ConstantTimeCompare(secret.Token, []byte(token)) == 0 {
			return legacyError("Token does not match server's copy", false, nil)
		}
		// Kubernetes checks the service account before the invalid-since
		// label.
		if err := v.legacyServiceAccount(ctx, l); err != nil {
			return err
		}
		if secret.InvalidSince != "" {
			return legacyError(fmt.Sprintf("the token in secret %s/%s for service account %s/%s has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '%s' label from the secret to temporarily allow use of this token", l.Namespace, l.SecretName, l.Namespace, l.ServiceAccountName, LegacyInvalidSinceLabel), true, nil)
		}
		return nil
	}
	return v.legacyServiceAccount(ctx, l)
}

func (v *Validator) legacyServiceAccount(ctx context.Context, l *LegacyClaims) error {
	obj, err := v.objects.GetObject(ctx, KindServiceAccount, l.Namespace, l.ServiceAccountName)
	if err != nil {
		problem := ErrLookupFailed
		if isNotFound(err) {
			problem = ErrServiceAccountNotFound
		}
		return &ObjectError{Kind: KindServiceAccount, Namespace: l.Namespace, Name: l.ServiceAccountName, ClaimedUID: l.ServiceAccountUID, Problem: problem, Err: err}
	}
	if !obj.DeletionTimestamp.IsZero() {
		return &ObjectError{Kind: KindServiceAccount, Namespace: l.Namespace, Name: l.ServiceAccountName, ClaimedUID: l.ServiceAccountUID, ActualUID: obj.UID, DeletedAt: obj.DeletionTimestamp, Problem: ErrServiceAccountDeleted}
	}
	if obj.UID != l.ServiceAccountUID {
		return &ObjectError{Kind: KindServiceAccount, Namespace: l.Namespace, Name: l.ServiceAccountName, ClaimedUID: l.ServiceAccountUID, ActualUID: obj.UID, Problem: ErrServiceAccountUIDMismatch}
	}
	return nil
}
