package credspec

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/internal/errs"
)

// Sentinel errors. Every error this package returns matches one of them
// with errors.Is (a constructor's *ksa.ConfigError matches
// ksa.ErrInvalidConfig); a *[Denial] carries an admission refusal's code
// and a *[SchemaError] the field at fault.
var (
	// ErrInvalidSpec: a credential spec or a GMSACredentialSpec manifest
	// cannot be used: not a JSON object (not JSON at all, an array, a
	// string, trailing garbage; the message is windows-gmsa's, the input
	// quoted in full), a field the GMSACredentialSpec schema does not
	// define or a value of the wrong type (a *[SchemaError]), not a
	// windows.k8s.io GMSACredentialSpec, a name that is not a valid object
	// name, an object without credspec.
	ErrInvalidSpec = errs.New(prefix, "invalid credential spec")
	// ErrTooLarge: a credential spec is over [MaxSize], a manifest over
	// 3 MiB, or a request body over the handler's limit; the message
	// names the size and the limit.
	ErrTooLarge = errs.New(prefix, "too large")

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

// SchemaError reports a credential spec field the CRD schema does not
// define, or a value of the wrong JSON type. It matches [ErrInvalidSpec].
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

// Is reports whether target is [ErrInvalidSpec].
func (e *SchemaError) Is(target error) bool { return target == ErrInvalidSpec }

// invalid returns an error matching [ErrInvalidSpec]: msg, then the cause.
func invalid(msg string, cause error) error { return errs.Wrap(prefix, ErrInvalidSpec, msg, cause) }

// invalidName reports an object name Kubernetes would refuse.
func invalidName(name string) error {
	return invalid(fmt.Sprintf("name %q is not a DNS-1123 subdomain", name), nil)
}

// notJSONObject reports input that is not a JSON object, with
// windows-gmsa's message: unable to parse [CRD ]"<input>" as a JSON object:
// <encoding/json's error>. object says the input is the
// GMSACredentialSpec object's, not the pod's.
func notJSONObject(input string, object bool, cause error) error {
	what := ""
	if object {
		what = "CRD "
	}
	return invalid(fmt.Sprintf("unable to parse %s%q as a JSON object", what, input), cause)
}

// tooLarge reports an input over a limit: what it is, its size (-1: not
// read to the end) and the limit, in bytes. It matches [ErrTooLarge].
func tooLarge(what string, size, limit int64) error {
	if size < 0 {
		return errs.Wrap(prefix, ErrTooLarge, fmt.Sprintf("%s is over the %d-byte limit", what, limit), nil)
	}
	return errs.Wrap(prefix, ErrTooLarge, fmt.Sprintf("%s of %d bytes is over the %d-byte limit", what, size, limit), nil)
}

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
	// Err is the underlying cause (the Source's error, the parser's, the
	// authorizer's), if any.
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
