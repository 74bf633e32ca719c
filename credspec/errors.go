package credspec

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/internal/errs"
)

// Sentinel errors. Every error this package returns matches one of them with
// errors.Is; the typed errors below carry the details and match their
// sentinels.
var (
	// ErrNotJSONObject: a credential spec is not a JSON object (not JSON at
	// all, an array, a string, trailing garbage). See [ParseError].
	ErrNotJSONObject = errs.New(prefix, "not a JSON object")
	// ErrTooLarge: a credential spec is over [MaxSize], or a request body
	// over the handler's limit. See [SizeError].
	ErrTooLarge = errs.New(prefix, "too large")
	// ErrSchema: a credential spec has a field the GMSACredentialSpec schema
	// does not define, or a value of the wrong type. See [SchemaError].
	ErrSchema = errs.New(prefix, "does not match the GMSACredentialSpec schema")
	// ErrInvalidObject: a manifest is not a windows.k8s.io
	// GMSACredentialSpec, or its name is not a valid object name.
	ErrInvalidObject = errs.New(prefix, "invalid GMSACredentialSpec object")
	// ErrInvalidConfig: a constructor was given an unusable configuration.
	// See [ConfigError].
	ErrInvalidConfig = errs.New(prefix, "invalid configuration")

	// ErrNotFound: the named GMSACredentialSpec does not exist (admission
	// code 404). A [Source] returns it, or a Kubernetes NotFound error,
	// for a missing object.
	ErrNotFound = errs.New(prefix, "GMSACredentialSpec not found")
	// ErrNoContents: the named object has no credspec (admission code 417).
	ErrNoContents = errs.New(prefix, "GMSACredentialSpec has no credspec")
	// ErrLookupFailed: the [Source] failed otherwise, or returned contents
	// that are not a JSON object (admission code 500).
	ErrLookupFailed = errs.New(prefix, "GMSACredentialSpec lookup failed")
	// ErrNotAuthorized: the service account (or the requesting user) may
	// not `use` the named GMSACredentialSpec (admission code 403).
	ErrNotAuthorized = errs.New(prefix, "not authorized to use the GMSACredentialSpec")
	// ErrContentsMismatch: a pod's inlined credential spec differs from the
	// named object's, or cannot be parsed (admission code 422).
	ErrContentsMismatch = errs.New(prefix, "credential spec contents do not match")
	// ErrAmbiguousSpec: a pod's inlined credential spec names a member twice
	// in one object (at any depth) or is not strict JSON text (invalid
	// UTF-8, lone surrogates): parsers may read it differently, and the
	// container runtime may not read what was compared (admission code
	// 422).
	ErrAmbiguousSpec = errs.New(prefix, "ambiguous credential spec")
	// ErrNameMissing: a credential spec is inlined without the name of
	// the object it came from (admission code 422).
	ErrNameMissing = errs.New(prefix, "credential spec set without a name")
	// ErrUpdateForbidden: a pod update changes GMSA settings (admission
	// code 403).
	ErrUpdateForbidden = errs.New(prefix, "GMSA settings of an existing pod cannot change")
	// ErrBadRequest: the admission review cannot be handled: not a pod,
	// undecodable, an unexpected operation (admission code 400).
	ErrBadRequest = errs.New(prefix, "bad admission request")
)

// prefix starts the messages of the package's errors.
const prefix = "credspec"

// ConfigError reports a configuration a constructor refuses. It matches
// [ErrInvalidConfig].
type ConfigError struct {
	// Field is the configuration field at fault, e.g. "HandlerConfig.Expander".
	Field  string
	Reason string
	Err    error
}

func (e *ConfigError) Error() string { return errs.Msg(prefix, e.Field+" "+e.Reason, e.Err) }

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// AmbiguityError reports a credential spec that parsers may read
// differently. It matches [ErrAmbiguousSpec].
type AmbiguityError struct {
	// Path and Member name a member given twice in one object; both are
	// empty when the text is not strict JSON (Err says why).
	Path, Member string
	Err          error
}

func (e *AmbiguityError) Error() string {
	if e.Member != "" {
		return errs.Msg(prefix, fmt.Sprintf("member %q appears twice in %s", e.Member, e.Path), nil)
	}
	return errs.Msg(prefix, "not strict JSON", e.Err)
}

// Is reports whether target is [ErrAmbiguousSpec].
func (e *AmbiguityError) Is(target error) bool { return target == ErrAmbiguousSpec }

// Unwrap returns the cause, if any.
func (e *AmbiguityError) Unwrap() error { return e.Err }

// ParseError reports a credential spec that is not a JSON object. Its
// message is windows-gmsa's: the input is quoted in full.
type ParseError struct {
	// Input is the text that failed to parse.
	Input string
	// Object is true when Input came from the GMSACredentialSpec object,
	// false when it came from the pod.
	Object bool
	// Err is encoding/json's error.
	Err error
}

// Error returns windows-gmsa's message: unable to parse [CRD ]"<input>" as
// a JSON object: <cause>.
func (e *ParseError) Error() string {
	if e.Object {
		return errs.Msg(prefix, fmt.Sprintf("unable to parse CRD %q as a JSON object", e.Input), e.Err)
	}
	return errs.Msg(prefix, fmt.Sprintf("unable to parse %q as a JSON object", e.Input), e.Err)
}

// Is reports whether target is [ErrNotJSONObject].
func (e *ParseError) Is(target error) bool { return target == ErrNotJSONObject }

// Unwrap returns encoding/json's error.
func (e *ParseError) Unwrap() error { return e.Err }

// SizeError reports an input over a size limit. It matches [ErrTooLarge].
type SizeError struct {
	// What names the input ("credential spec", "request body").
	What string
	// Size is the input's size in bytes, or -1 when it was not read to the
	// end.
	Size int64
	// Limit is the largest size allowed.
	Limit int64
}

// Error names the input, its size and the limit.
func (e *SizeError) Error() string {
	if e.Size < 0 {
		return errs.Msg(prefix, fmt.Sprintf("%s is over the %d-byte limit", e.What, e.Limit), nil)
	}
	return errs.Msg(prefix, fmt.Sprintf("%s of %d bytes is over the %d-byte limit", e.What, e.Size, e.Limit), nil)
}

// Is reports whether target is [ErrTooLarge].
func (e *SizeError) Is(target error) bool { return target == ErrTooLarge }

// SchemaError reports a credential spec field the CRD schema does not
// define, or a value of the wrong JSON type. It matches [ErrSchema].
type SchemaError struct {
	// Path is the JSON path of the field, e.g.
	// "credspec.DomainJoinConfig.dnsName".
	Path string
	// Reason says what is wrong.
	Reason string
}

// Error names the field and the problem.
func (e *SchemaError) Error() string {
	return errs.Msg(prefix, e.Path+": "+e.Reason, nil)
}

// Is reports whether target is [ErrSchema].
func (e *SchemaError) Is(target error) bool { return target == ErrSchema }

// NotFoundError is what [StaticSource] returns for an unknown name. It
// matches [ErrNotFound].
type NotFoundError struct {
	// Name is the name looked up.
	Name string
}

// Error says which name was not found.
func (e *NotFoundError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("GMSACredentialSpec %q not found", e.Name), nil)
}

// Is reports whether target is [ErrNotFound].
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Denial is an admission refusal: the HTTP code and message windows-gmsa
// answers with, the level (pod or container) concerned, and the cause.
//
// It implements apimachinery's APIStatus, so apierrors.IsForbidden,
// apierrors.IsNotFound, apierrors.IsInvalid and apierrors.IsBadRequest
// recognise it; [Denial.StatusError] gives the concrete *StatusError. It
// matches its sentinel (Kind) and unwraps to its cause.
type Denial struct {
	// Code is the admission result code: 400, 403, 404, 413, 417, 422 or 500.
	Code int32
	// Message is windows-gmsa's message, verbatim.
	Message string
	// Kind is the sentinel the denial matches: [ErrNotAuthorized],
	// [ErrNotFound], ...
	Kind error
	// Level is the pod or container concerned; nil for request-level
	// denials.
	Level *Level
	// CredSpecName is the GMSACredentialSpec concerned, if any.
	CredSpecName string
	// Err is the underlying cause (the Source's error, a *ParseError, the
	// authorizer's error), if any.
	Err error
}

// Error returns Message, after the package prefix. The admission response
// carries Message alone, windows-gmsa's words.
func (d *Denial) Error() string { return errs.Msg(prefix, d.Message, nil) }

// Unwrap returns the sentinel and the cause.
func (d *Denial) Unwrap() []error {
	if d.Err == nil {
		return []error{d.Kind}
	}
	return []error{d.Kind, d.Err}
}

// Status returns the status put in the admission response: Failure, the
// code, its standard reason and the message.
func (d *Denial) Status() metav1.Status {
	return metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    d.Code,
		Reason:  reasonForCode(d.Code),
		Message: d.Message,
	}
}

// StatusError returns the denial as an apimachinery *StatusError.
func (d *Denial) StatusError() *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: d.Status()}
}

func reasonForCode(code int32) metav1.StatusReason {
	switch code {
	case http.StatusBadRequest:
		return metav1.StatusReasonBadRequest
	case http.StatusForbidden:
		return metav1.StatusReasonForbidden
	case http.StatusNotFound:
		return metav1.StatusReasonNotFound
	case http.StatusRequestEntityTooLarge:
		return metav1.StatusReasonRequestEntityTooLarge
	case http.StatusUnprocessableEntity:
		return metav1.StatusReasonInvalid
	case http.StatusInternalServerError:
		return metav1.StatusReasonInternalError
	}
	return metav1.StatusReasonUnknown
}

func deny(code int32, kind error, level *Level, name string, cause error, format string, args ...any) *Denial {
	// windows-gmsa's messages quote causes: without our package prefixes.
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = errs.Text(err)
		}
	}
	return &Denial{
		Code:         code,
		Message:      fmt.Sprintf(format, args...),
		Kind:         kind,
		Level:        level,
		CredSpecName: name,
		Err:          cause,
	}
}
