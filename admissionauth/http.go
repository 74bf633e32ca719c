package admissionauth

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/ksa-go/ksa/internal/errs"
)

// VerifyRequest verifies an HTTP request to the webhook: the body read
// (up to MaxRequestBytes) and parsed with [ParseReview], then [Verify] with
// its one Authorization header. The body is put back, unread, for the
// handler. In Accept mode a request without Authorization is not parsed.
func (v *Verifier) VerifyRequest(r *http.Request) (*Result, error) {
	auth := r.Header.Values("Authorization")
	if len(auth) > 1 {
		return nil, errs.Wrap(prefix, ErrAuthorization, "authorization header given more than once", nil)
	}
	if len(auth) == 0 && v.mode == Accept {
		return &Result{}, nil
	}
	if len(auth) == 0 {
		return v.Verify(r.Context(), "", Review{})
	}
	if r.Body == nil {
		return nil, errs.Wrap(prefix, ErrReview, "not an AdmissionReview: empty body", nil)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, v.maxBody+1))
	if err != nil {
		return nil, errs.Wrap(prefix, ErrReview, "reading the body", err)
	}
	if int64(len(body)) > v.maxBody {
		return nil, errs.Wrap(prefix, ErrTooLarge, "request body over the limit", nil)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	review, err := ParseReview(body)
	if err != nil {
		return nil, err
	}
	return v.Verify(r.Context(), auth[0], review)
}

// resultKey keys the Result in a request's context.
type resultKey struct{}

// FromContext returns the Result the Handler verified the request with.
func FromContext(ctx context.Context) (*Result, bool) {
	res, ok := ctx.Value(resultKey{}).(*Result)
	return res, ok
}

// Handler returns middleware that verifies every request before next sees
// it: a refused request is answered with [StatusCode] of its error and the
// error's message (which never holds the token), and next is not called; an
// accepted one reaches next with its body intact and its Result in the
// context ([FromContext]).
func (v *Verifier) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := v.VerifyRequest(r)
		if err != nil {
			http.Error(w, err.Error(), StatusCode(err))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), resultKey{}, res)))
	})
}
