package credspec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/admissionauth"
)

// Paths the [Handler] serves.
const (
	MutatePath   = "/mutate"
	ValidatePath = "/validate"
	HealthPath   = "/health"
	InfoPath     = "/info"
)

// DefaultMaxRequestBytes is the default AdmissionReview body limit: 7 MiB,
// room for an UPDATE review carrying two objects of up to 3 MiB (the API
// server's own request-body limit) plus the review around them.
const DefaultMaxRequestBytes = 7 << 20

// DefaultReviewTimeout bounds the lookups and access checks of one review by
// default: the API server's default webhook timeout (timeoutSeconds: 10).
const DefaultReviewTimeout = 10 * time.Second

// admission.k8s.io versions the handler answers.
const (
	admissionV1      = "admission.k8s.io/v1"
	admissionV1beta1 = "admission.k8s.io/v1beta1"
)

// HandlerConfig configures a [Handler]. At least one of Expander and
// Validator is required.
type HandlerConfig struct {
	// Expander serves /mutate; nil: /mutate is 404.
	Expander *Expander
	// Validator serves /validate; nil: /validate is 404.
	Validator *Validator
	// MaxRequestBytes bounds the AdmissionReview body. Zero means
	// [DefaultMaxRequestBytes]; negative is an error. A larger body is
	// denied with code 413.
	MaxRequestBytes int64
	// Timeout bounds each review's lookups and access checks (the context
	// passed to the Source and Authorizer). Zero means
	// [DefaultReviewTimeout]; negative is an error.
	Timeout time.Duration
	// Version is what /info reports. Default "unknown".
	Version string
	// OnReview, if set, is called after every review with its outcome
	// (from the request's goroutine; it must be safe for concurrent use).
	OnReview func(ReviewOutcome)
	// MutateCallers and ValidateCallers, when set, verify the caller of
	// /mutate and /validate before its review is handled: its Bearer token
	// bound to the webhook's configuration, for the path's URL and the
	// review's API group (Kubernetes 1.37, alpha; package admissionauth).
	// Each path is a webhook URL of its own, hence a Verifier of its own.
	// A refused caller is answered with admissionauth.StatusCode of the
	// refusal and no review; its ReviewOutcome has the refusal as Err. Nil:
	// no token is looked at.
	MutateCallers, ValidateCallers *admissionauth.Verifier
}

// ReviewOutcome describes one handled review, for logging and metrics.
type ReviewOutcome struct {
	// Path is MutatePath or ValidatePath.
	Path string
	// UID is the request's UID ("" if the body could not be decoded).
	UID types.UID
	// Operation is the request's operation ("" if undecoded).
	Operation admissionv1.Operation
	// Namespace is the request's namespace.
	Namespace string
	// Allowed is the answer.
	Allowed bool
	// Patch is the number of JSON Patch operations returned.
	Patch int
	// Err is the *Denial when not allowed.
	Err error
}

// Handler is the admission webhook as an http.Handler, serving
// windows-gmsa's endpoints:
//   - POST /mutate and POST /validate with Content-Type exactly
//     application/json: an admission.k8s.io/v1 (or v1beta1) AdmissionReview
//     for a Pod; the answer is an AdmissionReview of the same version with
//     HTTP 200, the request's UID, and, when denied, the [Denial]'s status.
//     Other methods get 405, other content types 415, both without a body;
//   - /health (any method): 204;
//   - /info (any method): 200 {"version":"..."};
//   - anything else: 404.
//
// Each review's lookups and access checks run under the request's context
// bounded by the Timeout option. A body over the limit is answered with a
// denied review of code 413; one that is unreadable, not an AdmissionReview,
// without request, not about a Pod, or with an operation other than CREATE
// and UPDATE, with a denied review of code 400; never with a panic.
type Handler struct {
	expander  *Expander
	validator *Validator
	maxBytes  int64
	timeout   time.Duration
	info      []byte
	onReview  func(ReviewOutcome)
	callers   map[string]*admissionauth.Verifier
}

// NewHandler checks cfg and returns a handler; errors are a *ksa.ConfigError.
func NewHandler(cfg HandlerConfig) (*Handler, error) {
	if cfg.Expander == nil && cfg.Validator == nil {
		return nil, &ksa.ConfigError{Field: "credspec.HandlerConfig.Expander", Reason: "or Validator (or both) is required"}
	}
	if cfg.MaxRequestBytes < 0 {
		return nil, &ksa.ConfigError{Field: "credspec.HandlerConfig.MaxRequestBytes", Reason: fmt.Sprintf("is negative (%d)", cfg.MaxRequestBytes)}
	}
	if cfg.Timeout < 0 {
		return nil, &ksa.ConfigError{Field: "credspec.HandlerConfig.Timeout", Reason: fmt.Sprintf("is negative (%v)", cfg.Timeout)}
	}
	h := &Handler{expander: cfg.Expander, validator: cfg.Validator, maxBytes: cfg.MaxRequestBytes, timeout: cfg.Timeout, onReview: cfg.OnReview,
		callers: map[string]*admissionauth.Verifier{MutatePath: cfg.MutateCallers, ValidatePath: cfg.ValidateCallers}}
	if h.maxBytes == 0 {
		h.maxBytes = DefaultMaxRequestBytes
	}
	if h.timeout == 0 {
		h.timeout = DefaultReviewTimeout
	}
	v := cfg.Version
	if v == "" {
		v = "unknown"
	}
	info, err := json.Marshal(map[string]string{"version": v})
	if err != nil {
		return nil, &ksa.ConfigError{Field: "credspec.HandlerConfig.Version", Reason: "cannot be served", Err: err}
	}
	h.info = info
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case HealthPath:
		w.WriteHeader(http.StatusNoContent)
		return
	case InfoPath:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(h.info)
		return
	case MutatePath:
		if h.expander == nil {
			http.NotFound(w, r)
			return
		}
	case ValidatePath:
		if h.validator == nil {
			http.NotFound(w, r)
			return
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if strings.ToUpper(r.Method) != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	apiVersion, req, resp, err := h.decode(w, r)
	if v := h.callers[r.URL.Path]; v != nil && req != nil {
		review := admissionauth.Review{APIVersion: apiVersion, UID: string(req.UID), Group: req.Resource.Group}
		if _, err := v.Verify(r.Context(), r.Header.Get("Authorization"), review); err != nil {
			h.observe(r.URL.Path, req, &admissionv1.AdmissionResponse{UID: req.UID}, err)
			http.Error(w, err.Error(), admissionauth.StatusCode(err))
			return
		}
	}
	if req != nil {
		ctx, cancel := context.WithTimeout(r.Context(), h.timeout)
		if r.URL.Path == MutatePath {
			resp, err = h.mutate(ctx, req)
		} else {
			resp, err = h.validate(ctx, req)
		}
		cancel()
	}
	h.observe(r.URL.Path, req, resp, err)
	out, err := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: "AdmissionReview"},
		Response: resp,
	})
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// decode reads the review; on failure it returns the denied response to
// send instead of a request.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request) (string, *admissionv1.AdmissionRequest, *admissionv1.AdmissionResponse, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBytes))
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			cause := tooLarge("AdmissionReview body", -1, maxErr.Limit)
			return fail(admissionV1, deny(http.StatusRequestEntityTooLarge, ErrTooLarge, nil, "", cause, "couldn't read request body: %v", cause))
		}
		return fail(admissionV1, deny(http.StatusBadRequest, ErrBadRequest, nil, "", err, "couldn't read request body: %v", err))
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		return fail(admissionV1, deny(http.StatusBadRequest, ErrBadRequest, nil, "", err, "unable to unmarshall JSON body as an admission review: %v", err))
	}
	if review.Kind != "AdmissionReview" || (review.APIVersion != admissionV1 && review.APIVersion != admissionV1beta1) {
		d := deny(http.StatusBadRequest, ErrBadRequest, nil, "", nil,
			"expected an AdmissionReview of %s or %s, got kind %q of %q", admissionV1, admissionV1beta1, review.Kind, review.APIVersion)
		var uid types.UID
		if review.Request != nil {
			uid = review.Request.UID
		}
		return admissionV1, nil, denied(uid, d), d
	}
	if review.Request == nil {
		return fail(review.APIVersion, deny(http.StatusBadRequest, ErrBadRequest, nil, "", nil, "no 'Request' field in JSON body"))
	}
	return review.APIVersion, review.Request, nil, nil
}

// fail returns a decoding failure.
func fail(apiVersion string, d *Denial) (string, *admissionv1.AdmissionRequest, *admissionv1.AdmissionResponse, error) {
	return apiVersion, nil, denied("", d), d
}

func (h *Handler) observe(path string, req *admissionv1.AdmissionRequest, resp *admissionv1.AdmissionResponse, err error) {
	if h.onReview == nil {
		return
	}
	o := ReviewOutcome{Path: path, UID: resp.UID, Allowed: resp.Allowed}
	if req != nil {
		o.Operation, o.Namespace = req.Operation, req.Namespace
	}
	if resp.Patch != nil {
		var p Patch
		if json.Unmarshal(resp.Patch, &p) == nil {
			o.Patch = len(p)
		}
	}
	if !resp.Allowed {
		o.Err = err
	}
	h.onReview(o)
}
