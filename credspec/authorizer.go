package credspec

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

// UseRequest asks whether User may `use` the GMSACredentialSpec Name for a
// pod in Namespace.
type UseRequest struct {
	// User is who is checked: the pod's service account as Kubernetes
	// authenticates it, or the requesting user.
	User ksa.UserInfo
	// Namespace is the pod's namespace, where the review is made.
	Namespace string
	// Name is the GMSACredentialSpec's name.
	Name string
}

// Decision is an [Authorizer]'s answer. Reason, if any, is shown in the
// denial message.
type Decision struct {
	// Allowed grants `use`.
	Allowed bool
	// Reason explains the decision (a SubjectAccessReview's status.reason).
	Reason string
}

// Authorizer decides `use` access to GMSACredentialSpec objects. An error
// means no decision; the [Validator] then denies (fail closed).
type Authorizer interface {
	AuthorizeUse(ctx context.Context, req UseRequest) (Decision, error)
}

// AuthorizerFunc adapts a function to [Authorizer].
type AuthorizerFunc func(ctx context.Context, req UseRequest) (Decision, error)

// AuthorizeUse calls f.
func (f AuthorizerFunc) AuthorizeUse(ctx context.Context, req UseRequest) (Decision, error) {
	return f(ctx, req)
}

// LocalSubjectAccessReview returns the review windows-gmsa creates for req:
// a LocalSubjectAccessReview in req.Namespace for verb use on
// windows.k8s.io/v1 gmsacredentialspecs named req.Name, namespaced although
// the resource is cluster-scoped, so a RoleBinding in the pod's namespace
// to a ClusterRole granting use is enough.
func LocalSubjectAccessReview(req UseRequest) *authorizationv1.LocalSubjectAccessReview {
	var extra map[string]authorizationv1.ExtraValue
	if len(req.User.Extra) > 0 {
		extra = make(map[string]authorizationv1.ExtraValue, len(req.User.Extra))
		for k, v := range req.User.Extra {
			extra[k] = append(authorizationv1.ExtraValue(nil), v...)
		}
	}
	return &authorizationv1.LocalSubjectAccessReview{
		TypeMeta:   metav1.TypeMeta{APIVersion: authorizationv1.SchemeGroupVersion.String(), Kind: "LocalSubjectAccessReview"},
		ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace},
		Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: req.Namespace,
				Verb:      VerbUse,
				Group:     Group,
				Version:   Version,
				Resource:  Resource,
				Name:      req.Name,
			},
			User:   req.User.Username,
			UID:    req.User.UID,
			Groups: append([]string(nil), req.User.Groups...),
			Extra:  extra,
		},
	}
}

// ReviewFunc creates a LocalSubjectAccessReview and returns it with its
// status, as client-go's
// AuthorizationV1().LocalSubjectAccessReviews(ns).Create does.
type ReviewFunc func(ctx context.Context, review *authorizationv1.LocalSubjectAccessReview) (*authorizationv1.LocalSubjectAccessReview, error)

// errNoReview reports a [ReviewFunc] that returned neither a review nor an
// error.
var errNoReview = errs.New(prefix, "subject access review returned no status")

// ReviewAuthorizerConfig configures a [ReviewAuthorizer]. The zero value is
// not usable: Create is required.
type ReviewAuthorizerConfig struct {
	// Create sends each review to the API server. Required.
	Create ReviewFunc
}

// ReviewAuthorizer is an [Authorizer] backed by SubjectAccessReviews, as
// windows-gmsa's: allowed when the status says allowed and not denied.
type ReviewAuthorizer struct {
	create ReviewFunc
}

// NewReviewAuthorizer returns an authorizer that sends each request through
// cfg.Create.
func NewReviewAuthorizer(cfg ReviewAuthorizerConfig) (*ReviewAuthorizer, error) {
	if cfg.Create == nil {
		return nil, &ksa.ConfigError{Field: "credspec.ReviewAuthorizerConfig.Create", Reason: "is required"}
	}
	return &ReviewAuthorizer{create: cfg.Create}, nil
}

// AuthorizeUse creates the review of [LocalSubjectAccessReview] and reads
// its status.
func (a *ReviewAuthorizer) AuthorizeUse(ctx context.Context, req UseRequest) (Decision, error) {
	res, err := a.create(ctx, LocalSubjectAccessReview(req))
	if err != nil {
		return Decision{}, err
	}
	if res == nil {
		return Decision{}, errNoReview
	}
	return Decision{Allowed: res.Status.Allowed && !res.Status.Denied, Reason: res.Status.Reason}, nil
}
