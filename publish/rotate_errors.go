package publish

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

// The refusals of a [Rotation] step, each an [*RotationError] matching
// one of them (or rotation.ErrNoSigner, rotation.ErrOneAtATime): nothing
// was written.
var (
	// ErrRingFile: the ring file does not open (its keys, its times).
	ErrRingFile = errs.New(prefix, "ring file refused")
	// ErrNoDiscovery: the store publishes no discovery document, or one
	// that does not parse: publish the issuer first.
	ErrNoDiscovery = errs.New(prefix, "no discovery document")
	// ErrKeySetUnreadable: the store could not serve a copy of the key
	// set: what it publishes is unknown.
	ErrKeySetUnreadable = errs.New(prefix, "key set unreadable")
	// ErrKeySetUnusable: the key set the discovery document names does
	// not parse.
	ErrKeySetUnusable = errs.New(prefix, "key set unusable")
	// ErrUnknownKey: a copy of the key set holds a key the ring file
	// never had: the ring file and the store disagree.
	ErrUnknownKey = errs.New(prefix, "key unknown to the ring file")
	// ErrNoPublishedTime: the next key has no published time, so how long
	// relying parties have had it is unknown.
	ErrNoPublishedTime = errs.New(prefix, "next key without a published time")
	// ErrEarlySwitch: the ring file makes the next key sign less than the
	// propagation time after the copies got it.
	ErrEarlySwitch = errs.New(prefix, "switch before the propagation time")
)

// RotationError is a [Rotation] step refused before anything was
// written: what it found, and the entries of the ring file at fault.
type RotationError struct {
	// Kind is one of the sentinels above, rotation.ErrNoSigner or
	// rotation.ErrOneAtATime.
	Kind error
	// What says what was found.
	What string
	// Entries are the indices of the ring file's keys at fault (the
	// second, for ErrOneAtATime, a next key or an old key, as Old says).
	Entries []int
	// Old, for ErrOneAtATime: Entries[1] is an old key not retired, not a
	// second next key.
	Old bool
	// KeyID is the key at fault; Object the store's object.
	KeyID, Object string
	// At is the time at fault (the switch of ErrEarlySwitch); Since when
	// the copies got the key (its published time, or now when the step
	// publishes it again, Restarted); SafeAt the earliest time that
	// passes, for the Propagation.
	At, Since, SafeAt time.Time
	Restarted         bool
	Propagation       time.Duration
	// Err is the cause.
	Err error
}

// Error returns what was found and the cause.
func (e *RotationError) Error() string { return errs.Msg(prefix, e.What, e.Err) }

// Is matches the kind.
func (e *RotationError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause.
func (e *RotationError) Unwrap() error { return e.Err }

// CadenceError is a rotation period shorter than the whole rotation: a
// key signs at least until the next key has been published for the
// propagation time, signs after the delay, and has outlived every token
// of the former. It matches ksa.ErrInvalidConfig.
type CadenceError struct {
	// Every is the period; Whole the rotation: Propagation (the longer
	// of the ring's and the cadence's), Delay, and RetireWait.
	Every, Whole, Propagation, Delay, RetireWait time.Duration
}

// Error names the durations.
func (e *CadenceError) Error() string {
	return fmt.Sprintf("%s: Cadence.Every %v is shorter than the whole rotation (%v: propagation %v, delay %v, then the retirement wait %v)", prefix, e.Every, e.Whole, e.Propagation, e.Delay, e.RetireWait)
}

// Is matches ksa.ErrInvalidConfig.
func (e *CadenceError) Is(target error) bool { return target == ksa.ErrInvalidConfig }

// entry names the i-th key of the ring file.
func entry(i int) string { return "keys[" + strconv.Itoa(i) + "]" }
