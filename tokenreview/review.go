package tokenreview

import (
	"context"

	"github.com/ksa-go/ksa"
)

// Request is what a TokenReview asks: the token, and the audiences the
// relying party accepts (spec.audiences). Audiences is never empty when the
// [Validator] sends it.
type Request struct {
	Token     string
	Audiences []string
}

// Status is a TokenReview's answer (its status), in the module's own types
// so that this package needs no Kubernetes API types: the kubeapi package
// converts from authentication/v1.
type Status struct {
	// Authenticated is status.authenticated.
	Authenticated bool
	// User is status.user: the username, UID, groups and extras of the
	// service account, its pod and node.
	User ksa.UserInfo
	// Audiences is status.audiences: those of the request the token is
	// valid for.
	Audiences []string
	// Error is status.error, the apiserver's reason for a refusal.
	Error string
}

// Reviewer sends a TokenReview to kube-apiserver. A client-go
// implementation is a few lines (see the package example); tests pass a
// [ReviewerFunc].
//
// Review returns an error only when no answer was obtained (transport,
// authorization of the caller, a malformed answer); a token the apiserver
// refuses is a Status with Authenticated false.
type Reviewer interface {
	Review(ctx context.Context, req Request) (*Status, error)
}

// ReviewerFunc is a function that is a [Reviewer].
type ReviewerFunc func(ctx context.Context, req Request) (*Status, error)

// Review calls f.
func (f ReviewerFunc) Review(ctx context.Context, req Request) (*Status, error) { return f(ctx, req) }
