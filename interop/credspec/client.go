package credspec

import (
	"context"
	"encoding/json"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ksa-go/ksa"
	ksacredspec "github.com/ksa-go/ksa/credspec"
)

// NewAuthorizer returns an authorizer that creates each review through
// client (the webhook's RBAC needs create on
// authorization.k8s.io localsubjectaccessreviews).
func NewAuthorizer(client kubernetes.Interface) (*ksacredspec.ReviewAuthorizer, error) {
	if client == nil {
		return nil, &ksa.ConfigError{Field: "credspec.client", Reason: "is nil"}
	}
	return ksacredspec.NewReviewAuthorizer(ksacredspec.ReviewAuthorizerConfig{
		Create: func(ctx context.Context, r *authorizationv1.LocalSubjectAccessReview) (*authorizationv1.LocalSubjectAccessReview, error) {
			return client.AuthorizationV1().LocalSubjectAccessReviews(r.Namespace).Create(ctx, r, metav1.CreateOptions{})
		},
	})
}

// Source reads windows.k8s.io/v1 gmsacredentialspecs with a dynamic client
// (the webhook's RBAC needs get on them) and returns the credspec field as
// windows-gmsa does: json.Marshal of the decoded value. A missing object is
// the client's NotFound error; an object without credspec gives "".
type Source struct {
	client dynamic.Interface
}

// NewSource returns a source over client.
func NewSource(client dynamic.Interface) (*Source, error) {
	if client == nil {
		return nil, &ksa.ConfigError{Field: "credspec.client", Reason: "is nil"}
	}
	return &Source{client: client}, nil
}

// Contents implements credspec.Source.
func (s *Source) Contents(ctx context.Context, name string) (string, error) {
	obj, err := s.client.Resource(ksacredspec.GroupVersionResource()).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	v, ok := obj.Object[ksacredspec.ContentsField]
	if !ok || v == nil || v == "" {
		return "", nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
