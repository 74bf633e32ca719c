package jwxkeys

import (
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
)

const prefix = "jwxkeys"

var (
	// ErrInvalidConfig matches every *ConfigError.
	ErrInvalidConfig = errs.New(prefix, "invalid configuration")
	// ErrConvert: a key or set could not be converted between jwx and ksa
	// (jwx failed to encode or decode it).
	ErrConvert = errs.New(prefix, "conversion failed")
)

// ConfigError reports a configuration a constructor refuses. It matches
// [ErrInvalidConfig].
type ConfigError struct {
	Field, Reason string
}

func (e *ConfigError) Error() string { return errs.Msg(prefix, e.Field+" "+e.Reason, nil) }

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// ConvertError reports a conversion jwx could not do. It matches
// [ErrConvert] and wraps jwx's error.
type ConvertError struct {
	What string
	Err  error
}

func (e *ConvertError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("converting %s", e.What), e.Err)
}

// Is reports whether target is [ErrConvert].
func (e *ConvertError) Is(target error) bool { return target == ErrConvert }

// Unwrap returns jwx's error.
func (e *ConvertError) Unwrap() error { return e.Err }

// KeyError reports why the key provider found no key for a signature.
// Problem is the sentinel ksa's validator gives the same token
// (tokens.ErrAlgorithmNotAllowed, tokens.ErrUnknownKeyID,
// tokens.ErrKeySource or jwks.ErrNoKeys).
type KeyError struct {
	KeyID, Algorithm string
	Problem          error
	Err              error
}

func (e *KeyError) Error() string {
	return errs.Msg(prefix, fmt.Sprintf("%s (kid %q, alg %q)", errs.Text(e.Problem), e.KeyID, e.Algorithm), e.Err)
}

// Is reports whether target is the Problem sentinel.
func (e *KeyError) Is(target error) bool { return target == e.Problem }

// Unwrap returns the key source's error, if any.
func (e *KeyError) Unwrap() error { return e.Err }
