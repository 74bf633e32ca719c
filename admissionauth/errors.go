package admissionauth

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/tokens"
)

// prefix starts the messages of the package's errors.
const prefix = "admissionauth"

// Sentinel errors: every refusal matches one with errors.Is. A refused
// token also matches the tokens sentinel of its cause (tokens.ErrExpired,
// tokens.ErrAudienceMismatch, ...); a binding to another configuration is
// a [*BindingError].
var (
	// ErrNoToken: the request has no Authorization header (refused in
	// [Require] mode only).
	ErrNoToken = errs.New(prefix, "no bearer token")
	// ErrAuthorization: the Authorization header is not one Bearer token
	// (another scheme, an empty token, the header twice).
	ErrAuthorization = errs.New(prefix, "authorization header is not a bearer token")
	// ErrToken: the token failed validation (signature, issuer, audience,
	// times, live objects); the error wraps the tokens error.
	ErrToken = errs.New(prefix, "token refused")
	// ErrNotWebhookToken: the token is valid but bound to no webhook
	// configuration: it was not minted for calling webhooks.
	ErrNotWebhookToken = errs.New(prefix, "token not bound to a webhook configuration")
	// ErrBinding: the token is bound to a webhook configuration this
	// webhook is not registered in.
	ErrBinding = errs.New(prefix, "token bound to another webhook configuration")
	// ErrServiceAccount: the token was issued to a service account not
	// accepted as a caller.
	ErrServiceAccount = errs.New(prefix, "token for a service account not accepted")
	// ErrAPIGroup: the token's attested API group is not the group of the
	// resource the AdmissionReview is about.
	ErrAPIGroup = errs.New(prefix, "token not valid for the review's API group")
	// ErrReview: the request body is not an AdmissionReview with a request.
	ErrReview = errs.New(prefix, "not an AdmissionReview")
	// ErrTooLarge: the request body is over Config.MaxRequestBytes.
	ErrTooLarge = errs.New(prefix, "request body too large")
)

// BindingError reports a token bound to a webhook configuration other than
// those this webhook is registered in. It matches [ErrBinding].
type BindingError struct {
	// Kind and Name are the configuration the token is bound to.
	Kind tokens.BoundKind
	Name string
	// Accepted are the configurations of Config.Configurations.
	Accepted []Configuration
}

func (e *BindingError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("%s: %s %q, this webhook is registered in %s", errs.Text(ErrBinding), e.Kind, e.Name, configurationList(e.Accepted)), nil)
}

// Is reports whether target is [ErrBinding].
func (e *BindingError) Is(target error) bool { return target == ErrBinding }

func configurationList(cs []Configuration) string {
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %q", c.Kind, c.Name)
	}
	return s
}

func tokenError(err error) error {
	return errs.Wrap(prefix, ErrToken, "token refused", err)
}

func configError(field, reason string) error {
	return &ksa.ConfigError{Field: prefix + "." + field, Reason: reason}
}

// StatusCode is the HTTP status a refusal is answered with: 401 for a
// missing, malformed or invalid token, 403 for a valid token that may not
// call this webhook about this review, 413 for a body over the limit, 400
// for a body that is not an AdmissionReview, 500 otherwise. kube-apiserver
// treats any of them as the webhook failing (its failurePolicy decides).
func StatusCode(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrNoToken), errors.Is(err, ErrAuthorization), errors.Is(err, ErrToken):
		return http.StatusUnauthorized
	case errors.Is(err, ErrNotWebhookToken), errors.Is(err, ErrBinding), errors.Is(err, ErrServiceAccount), errors.Is(err, ErrAPIGroup):
		return http.StatusForbidden
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrReview):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
