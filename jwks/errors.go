package jwks

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/ksa-go/ksa/internal/errs"
)

// Sentinel errors. Every error the package returns matches one of them with
// errors.Is; the typed errors below carry the details.
var (
	// ErrUnsupportedKey: a key of a type, size or curve ksa does not use.
	ErrUnsupportedKey = errs.New(prefix, "unsupported key")
	// ErrPrivateMaterial: a key set holds private or symmetric key members.
	ErrPrivateMaterial = errs.New(prefix, "key set holds private or symmetric key material")
	// ErrUnknownKeyType: a key set holds a key whose kty is not RSA, EC or OKP.
	ErrUnknownKeyType = errs.New(prefix, "key set holds an unknown key type")
	// ErrMalformedSet: a key set document is not a JSON object with a keys
	// array.
	ErrMalformedSet = errs.New(prefix, "malformed key set")
	// ErrSetTooLarge: a key set is over the byte or key-count limit.
	ErrSetTooLarge = errs.New(prefix, "key set too large")
	// ErrNoKeys: a PEM file or other key source holds no usable key.
	ErrNoKeys = errs.New(prefix, "no keys")
	// ErrMalformedPEM: a PEM block that claims to be a key does not parse.
	ErrMalformedPEM = errs.New(prefix, "malformed PEM key")
	// ErrKeyFile: a key file cannot be opened or read (the *PEMError also
	// matches the cause, e.g. fs.ErrNotExist).
	ErrKeyFile = errs.New(prefix, "key file unreadable")
)

// ErrInvalidConfig matches every *ConfigError: a constructor got a
// configuration it cannot use.
var ErrInvalidConfig = errs.New(prefix, "invalid configuration")

// ConfigError reports a configuration a constructor refuses. It matches
// [ErrInvalidConfig].
type ConfigError struct {
	// Field is the configuration field at fault, e.g. "RemoteConfig.URL".
	Field  string
	Reason string
	Err    error
}

func (e *ConfigError) Error() string { return errs.Msg(prefix, e.Field+" "+e.Reason, e.Err) }

// Is reports whether target is [ErrInvalidConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the cause, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// prefix starts the messages of the package's errors.
const prefix = "jwks"

// KeyTypeError reports a key ksa does not accept, and why. It matches
// [ErrUnsupportedKey].
type KeyTypeError struct {
	// Type is the Go type of the key, or the JWK kty.
	Type   string
	Reason string
	Err    error
}

func (e *KeyTypeError) Error() string {
	return errs.Msg(prefix, "unsupported key "+e.Type+": "+e.Reason, e.Err)
}

// Is reports whether target is [ErrUnsupportedKey].
func (e *KeyTypeError) Is(target error) bool { return target == ErrUnsupportedKey }

// Unwrap returns the underlying cause, if any.
func (e *KeyTypeError) Unwrap() error { return e.Err }

// MemberError reports a problem with one key of a key set document or of a
// list of keys: a private or symmetric member, an unknown key type, a
// member that does not parse, or a key that cannot be used. It matches
// [ErrPrivateMaterial], [ErrUnknownKeyType] or [ErrUnsupportedKey] as Kind
// says.
type MemberError struct {
	// Index is the key's position in the keys array or list, or -1 for a
	// member found outside the keys (Audit).
	Index int
	// Path is where Audit found a member below a key or outside the keys,
	// as a JSON path ("$.keys[0].ext", "$.meta"); empty for a key's own
	// members.
	Path string
	// KeyID is the key's kid, if it had a readable one.
	KeyID string
	// Member is the JWK member at fault ("d", "kty", "n", ...), if one is.
	Member string
	// Reason says what is wrong, when the cause does not say it all.
	Reason string
	// Kind is the sentinel the error matches.
	Kind error
	Err  error
}

func (e *MemberError) Error() string {
	msg := ""
	if e.Index >= 0 {
		msg = fmt.Sprintf("key #%d", e.Index)
		if e.KeyID != "" {
			msg += fmt.Sprintf(" (kid %q)", e.KeyID)
		}
		if e.Member != "" {
			msg += " "
		}
	}
	if e.Member != "" {
		msg += fmt.Sprintf("member %q", e.Member)
	}
	if e.Path != "" {
		msg += " at " + e.Path
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return errs.Msg(prefix, msg, e.Err)
}

// Is reports whether target is the error's Kind.
func (e *MemberError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying cause, if any.
func (e *MemberError) Unwrap() error { return e.Err }

// SetError reports a key set document that cannot be read at all, or that
// holds no usable key. It matches [ErrMalformedSet], [ErrSetTooLarge] or
// [ErrNoKeys].
type SetError struct {
	Reason string
	Kind   error
	Err    error
}

func (e *SetError) Error() string { return errs.Msg(prefix, e.Reason, e.Err) }

// Is reports whether target is the error's Kind.
func (e *SetError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying cause, if any.
func (e *SetError) Unwrap() error { return e.Err }

// PEMError reports a PEM input without keys or with a key block that does not
// parse, or a key file that cannot be read. It matches [ErrNoKeys],
// [ErrMalformedPEM] or [ErrKeyFile].
type PEMError struct {
	// Source names the file, or is empty for in-memory data.
	Source string
	// Block is the index of the PEM block at fault, or -1.
	Block int
	// Type is the PEM block type at fault.
	Type   string
	Reason string
	Kind   error
	Err    error
}

func (e *PEMError) Error() string {
	msg := ""
	if e.Source != "" {
		msg += e.Source + ": "
	}
	if e.Block >= 0 {
		msg += fmt.Sprintf("PEM block #%d (%s): ", e.Block, e.Type)
	}
	msg += e.Reason
	cause := e.Err
	// The file's name is said already: an *fs.PathError would say it
	// again.
	var pe *fs.PathError
	if e.Source != "" && errors.As(cause, &pe) && pe.Path == e.Source {
		cause = pe.Err
	}
	return errs.Msg(prefix, msg, cause)
}

// Is reports whether target is the error's Kind.
func (e *PEMError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying cause, if any.
func (e *PEMError) Unwrap() error { return e.Err }
