package ksaprom

import (
	"github.com/ksa-go/ksa/internal/errs"
)

const prefix = "ksaprom"

// ErrInvalidConfig matches every *ConfigError.
var ErrInvalidConfig = errs.New(prefix, "invalid configuration")

// ConfigError reports a configuration New refuses, or a registration that
// failed (Err). It matches [ErrInvalidConfig].
type ConfigError struct {
	// Field is the configuration field at fault, e.g. "Config.Registerer".
	Field  string
	Reason string
	Err    error
}

func (e *ConfigError) Error() string { return errs.Msg(prefix, e.Field+" "+e.Reason, e.Err) }

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }
