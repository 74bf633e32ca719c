package golangjwt

import (
	"errors"
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
)

const prefix = "golangjwt"

// ErrInvalidConfig matches every *ConfigError.
var ErrInvalidConfig = errs.New(prefix, "invalid configuration")

// ConfigError reports a configuration NewKeys refuses. It matches
// [ErrInvalidConfig].
type ConfigError struct {
	// Field is the configuration field at fault, e.g. "Config.MaxKeysPerToken".
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return errs.Msg(prefix, e.Field+" "+e.Reason, nil) }

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// errCritical is the cause of a refusal of a header with "crit".
var errCritical = errors.New(`critical extensions ("crit") are not supported`)

// KeyError reports why the key function found no key for a token. Problem
// is the sentinel of package tokens (or jwks) the same token gets from
// ksa's own validator: tokens.ErrAlgorithmNotAllowed,
// tokens.ErrUnknownKeyID, tokens.ErrKeySource, tokens.ErrMalformed or
// jwks.ErrNoKeys; errors.Is matches it through jwt's own error.
type KeyError struct {
	KeyID, Algorithm string
	Problem          error
	// Err is the key source's error, if any.
	Err error
}

func (e *KeyError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("%s (kid %q, alg %q)", errs.Text(e.Problem), e.KeyID, e.Algorithm), e.Err)
}

// Is reports whether target is the Problem sentinel.
func (e *KeyError) Is(target error) bool { return target == e.Problem }

// Unwrap returns the key source's error, if any.
func (e *KeyError) Unwrap() error { return e.Err }
