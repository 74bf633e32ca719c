package jwks

import (
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
)

// Sentinel errors. Every error the package returns matches one of them with
// errors.Is (or, from a constructor, ksa.ErrInvalidConfig); the typed
// errors carry what a caller acts on: [MemberError] the key and member at
// fault, [FetchError] the URL and status, [RateLimitError] when a fetch may
// happen again.
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
	// ErrNoKeys: PEM data, a key set or another key source holds no usable
	// key.
	ErrNoKeys = errs.New(prefix, "no keys")
	// ErrMalformedPEM: a PEM block that claims to be a key does not parse,
	// is encrypted or damaged (keystore's key files too).
	ErrMalformedPEM = errs.New(prefix, "malformed PEM key")
)

// prefix starts the messages of the package's errors.
const prefix = "jwks"

// unsupported reports a key ksa does not accept, and why, matching
// [ErrUnsupportedKey]: typ is the Go type of the key.
func unsupported(typ, reason string, cause error) error {
	return errs.Wrap(prefix, ErrUnsupportedKey, "unsupported key "+typ+": "+reason, cause)
}

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
