package kubeapi

import (
	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the messages of the package's errors.
const prefix = "kubeapi"

var (
	// ErrInvalidConfig matches every *ConfigError.
	ErrInvalidConfig = errs.New(prefix, "invalid configuration")
	// ErrNoReview: ReviewStatus got no TokenReview to read.
	ErrNoReview = errs.New(prefix, "no TokenReview in the answer")
)

// ConfigError reports a configuration a constructor refuses. It matches
// [ErrInvalidConfig].
type ConfigError struct {
	// Field is the configuration field at fault, e.g.
	// "ManagerConfig.Requester".
	Field  string
	Reason string
	Err    error
}

func (e *ConfigError) Error() string { return errs.Msg(prefix, e.Field+" "+e.Reason, e.Err) }

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }
