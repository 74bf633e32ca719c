package kubeapi

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/tokens"
)

// IsServiceAccountTokenSecret reports whether secret is a legacy token
// secret of the service account, as Kubernetes' IsServiceAccountToken
// decides: type kubernetes.io/service-account-token, the
// kubernetes.io/service-account.name annotation equal to the account's name,
// and the kubernetes.io/service-account.uid annotation, when present, equal
// to its UID. Stricter than Kubernetes, when both the secret and the account
// carry a namespace, they must agree.
func IsServiceAccountTokenSecret(secret *corev1.Secret, sa ksa.ServiceAccount) bool {
	if secret == nil || secret.Type != corev1.SecretTypeServiceAccountToken {
		return false
	}
	if secret.Annotations[corev1.ServiceAccountNameKey] != sa.Name {
		return false
	}
	if uid := secret.Annotations[corev1.ServiceAccountUIDKey]; uid != "" && uid != sa.UID {
		return false
	}
	return secret.Namespace == "" || sa.Namespace == "" || secret.Namespace == sa.Namespace
}

// LegacySecret returns what legacy token validation needs to know of a
// token Secret (tokens.LegacySecretGetter).
func LegacySecret(secret *corev1.Secret) tokens.LegacySecret {
	out := tokens.LegacySecret{
		UID:          string(secret.UID),
		Token:        secret.Data[corev1.ServiceAccountTokenKey],
		InvalidSince: secret.Labels[tokens.LegacyInvalidSinceLabel],
	}
	if ts := secret.DeletionTimestamp; ts != nil {
		out.DeletionTimestamp = ts.Time
	}
	return out
}
