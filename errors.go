package ksa

import (
	"strconv"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
)

// Sentinel errors of the root package. Errors of the package match one
// with errors.Is; a *[NameError] or a *[ConfigError] carries the details.
var (
	// ErrInvalidUsername: a string is not system:serviceaccount:<ns>:<name>
	// with valid parts; for a bad part the error also wraps the
	// *[NameError].
	ErrInvalidUsername = errs.New(prefix, "invalid service-account username")
	// ErrInvalidName: a namespace or object name Kubernetes would refuse.
	ErrInvalidName = errs.New(prefix, "invalid name")
	// ErrInvalidConfig: a constructor of one of the module's packages got
	// a configuration it cannot use; every *ConfigError matches it.
	ErrInvalidConfig = errs.New(prefix, "invalid configuration")
)

// prefix starts the messages of the package's errors.
const prefix = "ksa"

// NameError reports a namespace or object name that Kubernetes would not
// accept. It matches [ErrInvalidName].
type NameError struct {
	// Field names what was checked ("namespace", "name", "pod name", ...).
	Field string
	Value string
	// Reason says which rule the value breaks.
	Reason string
}

func (e *NameError) Error() string {
	return errs.Msg(prefix, e.Field+" "+strconv.Quote(e.Value)+" "+e.Reason, nil)
}

// Is reports whether target is [ErrInvalidName].
func (e *NameError) Is(target error) bool { return target == ErrInvalidName }

// ConfigError reports a configuration that a constructor refuses; it is
// the configuration error of every package of the module, and matches
// [ErrInvalidConfig].
type ConfigError struct {
	// Field is the configuration field at fault, qualified by the package
	// that refuses it: "jwks.RemoteConfig.URL". The package's name starts
	// the message, as in every error of that package: "jwks:
	// RemoteConfig.URL is not https".
	Field string
	// Reason says what is wrong with the field.
	Reason string
	// Err is the cause, if any.
	Err error
}

func (e *ConfigError) Error() string {
	pkg, field, ok := strings.Cut(e.Field, ".")
	if !ok {
		pkg, field = prefix, e.Field
	}
	return errs.Msg(pkg, field+" "+e.Reason, e.Err)
}

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// ErrorText returns err's message without the package name that starts
// every error of this module ("jwks: no keys" gives "no keys"), for
// quoting err inside a message of one's own, as the module's errors quote
// their causes: the name says which Go package failed, which a person
// reading a command's or a controller's message has no use for. An error
// is recognized as the module's by its type, never by its text, so an
// error of another module or of the standard library ("open sa.key: no
// such file or directory", "x509: certificate signed by unknown
// authority") keeps its text whole. A nil err gives "".
func ErrorText(err error) string { return errs.Text(err) }
