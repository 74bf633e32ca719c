package extsigner

import (
	"errors"
	"fmt"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the messages of the package's errors.
const prefix = "extsigner"

// Sentinel errors. Every error the package returns matches one of them,
// ksa.ErrInvalidConfig (a configuration or key the ring cannot use: a
// constructor's is a *ksa.ConfigError; Listen's may match
// ErrSharedSocketDirectory too), errors.ErrUnsupported (a feature
// this system lacks) or a jwks sentinel (a key jwks refuses); or it is the
// system's (a socket Listen cannot make).
var (
	// ErrUnknownKeyID: no key of the ring has the key ID.
	ErrUnknownKeyID = errs.New(prefix, "no key with that key ID")
	// ErrDuplicateKeyID: a key ID is already in the ring.
	ErrDuplicateKeyID = errs.New(prefix, "key ID already in the ring")
	// ErrTooManyKeys: the ring already holds MaxKeys keys.
	ErrTooManyKeys = errs.New(prefix, "too many keys")
	// ErrTooEarly: a rotation step asked before it is safe (a key promoted
	// before every kube-apiserver and relying party can know it, or retired
	// while tokens it signed may be live). RotationError.ReadyAt says when.
	ErrTooEarly = errs.New(prefix, "rotation step too early")
	// ErrInvalidTransition: a rotation step that no waiting makes right
	// (retiring the primary, promoting a key that cannot sign).
	ErrInvalidTransition = errs.New(prefix, "invalid rotation step")
	// ErrInvalidClaims: the claims of a Sign request are not a strict
	// base64url JSON object within the limits.
	ErrInvalidClaims = errs.New(prefix, "invalid claims")
	// ErrSignerFailed: the signing key (a KMS or HSM call) returned an
	// error. SignError.KeyID names the key.
	ErrSignerFailed = errs.New(prefix, "signing key failed")
	// ErrInvalidRingFile: a ring file that is not strict JSON, has a member
	// it should not, or a value or a schedule the ring refuses; the error
	// names the member.
	ErrInvalidRingFile = errs.New(prefix, "invalid ring file")
	// ErrRotationUnderWay: RingFile.Rotate was asked to start a rotation
	// before the one under way ends (a key becomes the primary after the
	// next key would be published). It matches ErrInvalidRingFile too.
	ErrRotationUnderWay = errs.New(prefix, "rotation under way")
	// ErrRingFileStalled: no check of a ring file has ended for a while
	// (RingFileWatcher.Stalled): a read that hangs, such as on a hung
	// network file system, stops the reloads.
	ErrRingFileStalled = errs.New(prefix, "ring file checks stalled")
	// ErrSelfCheck: a signature the signing key returned does not verify
	// with the key the ring publishes; it was not handed out.
	// SignError.KeyID names the key.
	ErrSelfCheck = errs.New(prefix, "signature does not verify with the published key")
	// ErrSharedSocketDirectory: the directory of a socket file Listen was
	// asked for, or a directory above it, can be changed by a user other
	// than root and the process's own, who could bind the socket's name
	// while the signer is not listening and serve kube-apiserver in its
	// place. The error (a *ksa.ConfigError) names the directory.
	ErrSharedSocketDirectory = errs.New(prefix, "socket directory open to other users")
)

// errUnsupported is the cause of a refusal for a feature this system
// lacks (peer credentials, abstract sockets).
var errUnsupported = errs.Wrap(prefix, errors.ErrUnsupported, "not supported on this system", nil)

// RotationError reports a rotation step the ring refuses. It matches
// [ErrTooEarly] (ReadyAt says when the step becomes safe) or
// [ErrInvalidTransition].
type RotationError struct {
	// Step is "promote" or "retire".
	Step  string
	KeyID string
	// Role is the key's role when the step was asked.
	Role   Role
	Reason string
	// ReadyAt is when the step becomes safe, for ErrTooEarly; zero
	// otherwise.
	ReadyAt time.Time
	Kind    error
}

func (e *RotationError) Error() string {
	msg := fmt.Sprintf("cannot %s %s key %q: %s", e.Step, e.Role, e.KeyID, e.Reason)
	if !e.ReadyAt.IsZero() {
		msg += " (safe from " + e.ReadyAt.UTC().Format(time.RFC3339) + ")"
	}
	return errs.Msg(prefix, msg, nil)
}

// Is reports whether target is the error's Kind.
func (e *RotationError) Is(target error) bool { return target == e.Kind }

// SignError reports a signing key that failed or returned a signature that
// does not verify: KeyID is the key, the primary when Sign was asked. It
// matches Kind: [ErrSignerFailed] or [ErrSelfCheck]; Err is the signer's
// own error (a KMS client's, context.DeadlineExceeded).
type SignError struct {
	KeyID string
	Kind  error
	Err   error
}

func (e *SignError) Error() string {
	what := "signing key failed"
	if e.Kind == ErrSelfCheck {
		what = "answer withheld, the published key rejects it"
	}
	return errs.Msg(prefix, fmt.Sprintf("key %q: %s", e.KeyID, what), e.Err)
}

// Is reports whether target is the error's Kind.
func (e *SignError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause, if any.
func (e *SignError) Unwrap() error { return e.Err }

// keyError reports a key the ring refuses or cannot find, matching kind:
// "key <id>: <reason>: <cause>".
func keyError(kind error, keyID, reason string, cause error) error {
	msg := reason
	switch {
	case keyID != "" && msg != "":
		msg = fmt.Sprintf("key %q: %s", keyID, msg)
	case keyID != "":
		msg = fmt.Sprintf("key %q", keyID)
	}
	return errs.Wrap(prefix, kind, msg, cause)
}
