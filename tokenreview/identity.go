package tokenreview

import "github.com/ksa-go/ksa"

// IdentityOf reads the identity a service-account user carries: the
// service account from the username (system:serviceaccount:<ns>:<name>)
// and UID, and the pod, node and credential ID from the extras, which
// Kubernetes sets from the token's kubernetes.io claims. It is the inverse
// of ksa.Identity.UserInfo. An extra with several values is ignored, as
// Kubernetes never sets one. The error matches ksa.ErrInvalidUsername.
func IdentityOf(u ksa.UserInfo) (ksa.Identity, error) {
	sa, err := ksa.ParseUsername(u.Username)
	if err != nil {
		return ksa.Identity{}, err
	}
	sa.UID = u.UID
	one := func(key string) string {
		if v := u.Extra[key]; len(v) == 1 {
			return v[0]
		}
		return ""
	}
	id := ksa.Identity{ServiceAccount: sa, CredentialID: one(ksa.ExtraCredentialID)}
	id.Pod = ksa.ObjectRef{Name: one(ksa.ExtraPodName), UID: one(ksa.ExtraPodUID)}
	id.Node = ksa.ObjectRef{Name: one(ksa.ExtraNodeName), UID: one(ksa.ExtraNodeUID)}
	return id, nil
}
