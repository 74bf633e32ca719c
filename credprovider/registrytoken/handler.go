package registrytoken

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/tokens"
)

// Limits on a token request, checked before it is parsed.
const (
	// MaxQueryBytes bounds the request's query string.
	MaxQueryBytes = 8 << 10
	// MaxScopes bounds the scopes of one request (a pull asks for one, a
	// cross-repository push for two).
	MaxScopes = 16
	// MaxAuthorizationBytes bounds the Authorization header: a Basic pair
	// holding a token of tokens.DefaultMaxTokenBytes, base64-encoded, and
	// a username.
	MaxAuthorizationBytes = tokens.DefaultMaxTokenBytes/3*4 + 1024
)

// Response is the JSON a token request is answered with (the registry token
// protocol's "token" and its OAuth 2.0 alias "access_token").
type Response struct {
	Token       string `json:"token"`
	AccessToken string `json:"access_token"`
	ExpiresIn   int64  `json:"expires_in"`
	IssuedAt    string `json:"issued_at"`
}

// ServeHTTP answers GET ?service=SERVICE&scope=SCOPE... with HTTP Basic
// credentials whose password is the service-account token (what a
// credential provider hands the kubelet) or a Bearer service-account
// token. The answer is a [Response], or an error status from [StatusFor]
// with a JSON body {"error": message} that never quotes the token.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tok, err := s.serve(r)
	if err != nil {
		status := StatusFor(err)
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf("Basic realm=%q", s.cfg.Service))
		}
		writeJSON(w, status, map[string]string{"error": publicText(err)})
		return
	}
	writeJSON(w, http.StatusOK, Response{
		Token: tok.Raw, AccessToken: tok.Raw,
		ExpiresIn: int64(tok.Expiry.Sub(tok.IssuedAt) / time.Second),
		IssuedAt:  tok.IssuedAt.UTC().Format(time.RFC3339),
	})
}

func (s *Server) serve(r *http.Request) (*Token, error) {
	if r.Method != http.MethodGet {
		return nil, errMethod
	}
	if len(r.URL.RawQuery) > MaxQueryBytes {
		return nil, wrap(ErrTooLarge, fmt.Sprintf("the query is over %d bytes", MaxQueryBytes), nil)
	}
	auth := r.Header.Values("Authorization")
	if len(auth) > 1 {
		return nil, wrap(ErrUnauthenticated, "several Authorization headers", nil)
	}
	if len(auth) == 1 && len(auth[0]) > MaxAuthorizationBytes {
		return nil, wrap(ErrTooLarge, fmt.Sprintf("the Authorization header is over %d bytes", MaxAuthorizationBytes), nil)
	}
	req, err := ReadRequest(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	if len(auth) == 0 {
		return nil, ErrUnauthenticated
	}
	if req.ServiceAccountToken, err = s.credential(auth[0]); err != nil {
		return nil, err
	}
	return s.Issue(r.Context(), req)
}

var errMethod = wrap(ErrBadRequest, "only GET is served", nil)

// ReadRequest parses a token request's query: one "service" parameter and
// any number of "scope" parameters, each holding one or more scopes
// separated by spaces (at most MaxScopes in all). Other parameters
// (account, client_id, offline_token) are ignored. The token is not read
// here.
func ReadRequest(rawQuery string) (Request, error) {
	if len(rawQuery) > MaxQueryBytes {
		return Request{}, wrap(ErrTooLarge, fmt.Sprintf("the query is over %d bytes", MaxQueryBytes), nil)
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return Request{}, wrap(ErrBadRequest, "malformed query", err)
	}
	if len(q["service"]) != 1 {
		return Request{}, wrap(ErrBadRequest, "want one service parameter", nil)
	}
	req := Request{Service: q.Get("service")}
	for _, v := range q["scope"] {
		for one := range strings.FieldsSeq(v) {
			if len(req.Scopes) == MaxScopes {
				return Request{}, wrap(ErrBadRequest, fmt.Sprintf("over %d scopes", MaxScopes), nil)
			}
			sc, err := ParseScope(one)
			if err != nil {
				return Request{}, err
			}
			req.Scopes = append(req.Scopes, sc)
		}
	}
	return req, nil
}

// credential returns the token an Authorization header carries.
func (s *Server) credential(h string) (string, error) {
	scheme, rest, _ := strings.Cut(h, " ")
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		if rest == "" {
			return "", wrap(ErrUnauthenticated, "an empty Bearer token", nil)
		}
		return rest, nil
	case strings.EqualFold(scheme, "Basic"):
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return "", wrap(ErrUnauthenticated, "the Basic credential is not base64", nil)
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		switch {
		case !ok || pass == "":
			return "", wrap(ErrUnauthenticated, "the Basic credential has no password", nil)
		case s.cfg.Username != "" && user != s.cfg.Username:
			return "", wrap(ErrUnauthenticated, "the Basic username is not the configured one", nil)
		}
		return pass, nil
	default:
		return "", wrap(ErrUnauthenticated, "the Authorization scheme is neither Basic nor Bearer", nil)
	}
}

// StatusFor returns the HTTP status a refusal is answered with: 401 for
// ErrUnauthenticated and ErrTokenRefused, 403 for ErrDenied, 400 for
// ErrBadRequest and ErrTooLarge (405 for a method other than GET), 500
// otherwise.
func StatusFor(err error) int {
	switch {
	case errors.Is(err, errMethod):
		return http.StatusMethodNotAllowed
	case errors.Is(err, ErrUnauthenticated), errors.Is(err, ErrTokenRefused):
		return http.StatusUnauthorized
	case errors.Is(err, ErrDenied):
		return http.StatusForbidden
	case errors.Is(err, ErrBadRequest), errors.Is(err, ErrTooLarge):
		return http.StatusBadRequest
	default:
		return http.StatusInternalServerError
	}
}

// publicText is what a client is told: the whole message for a malformed
// request (it quotes nothing of the token), the sentinel's phrase
// otherwise, so that nothing a verifier said about the token leaves.
func publicText(err error) string {
	for _, kind := range []error{ErrTooLarge, ErrBadRequest} {
		if errors.Is(err, kind) {
			return err.Error()
		}
	}
	for _, kind := range []error{ErrUnauthenticated, ErrTokenRefused, ErrDenied} {
		if errors.Is(err, kind) {
			return errs.Text(kind)
		}
	}
	return errs.Text(ErrIssue)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"encoding the answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
