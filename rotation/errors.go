package rotation

import (
	"strconv"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the messages of the package's errors.
const prefix = "rotation"

// The rules of a rotation, one sentinel each. Every refusal of [New],
// [Schedule.CheckReplace], [Schedule.Next], [Schedule.Postpone] and
// [Schedule.Apply] is a *[RuleError] matching one of them with errors.Is;
// a Policy or Cadence refused is a *ksa.ConfigError.
var (
	// ErrKeyID: a key ID is empty, given twice, or not in the schedule.
	ErrKeyID = errs.New(prefix, "invalid key ID")
	// ErrTooManyKeys: more than MaxKeys keys.
	ErrTooManyKeys = errs.New(prefix, "too many keys")
	// ErrNoSigner: no key signs (New), or none signs yet (Next).
	ErrNoSigner = errs.New(prefix, "no key signs")
	// ErrOrder: a key's times are out of range, or out of order
	// (published, then signing, then retired).
	ErrOrder = errs.New(prefix, "times out of order")
	// ErrVerifyOnly: a verify-only key has a signing time, or a key that
	// can sign is unlisted.
	ErrVerifyOnly = errs.New(prefix, "verify-only rule broken")
	// ErrTwoSigners: two keys start signing at the same instant.
	ErrTwoSigners = errs.New(prefix, "two keys start signing at once")
	// ErrStaging: a key signs less than the propagation time after it is
	// published (or first served, or published again).
	ErrStaging = errs.New(prefix, "propagation too short")
	// ErrRetireEarly: a key is retired, or withdrawn, while tokens or
	// certificates it signed may still be valid.
	ErrRetireEarly = errs.New(prefix, "withdrawn while tokens may be live")
	// ErrLastSigner: the last key that signs has a retirement: no key
	// would sign after it.
	ErrLastSigner = errs.New(prefix, "last signing key retired")
	// ErrOneAtATime: the schedule names two next keys, or a next key while
	// a key that signed before the signer is still published (Next).
	ErrOneAtATime = errs.New(prefix, "one rotation at a time")
)

// The fields of a [Key] a [RuleError] names.
const (
	FieldPublished = "Published"
	FieldSigns     = "Signs"
	FieldRetired   = "Retired"
)

// RuleError is a schedule, a replacement or a step that breaks a rule of
// the rotation. It matches Rule with errors.Is.
type RuleError struct {
	// Rule is the sentinel of the rule broken: ErrStaging, ErrRetireEarly...
	Rule error
	// KeyID is the key at fault; empty when the rule is about the whole
	// schedule (ErrTooManyKeys, ErrNoSigner).
	KeyID string
	// Index is the key's position in the keys given to New (of the new
	// schedule, for CheckReplace); -1 when it has none (a key withdrawn).
	Index int
	// Field is the time at fault: FieldPublished, FieldSigns or
	// FieldRetired; empty when no one time is.
	Field string
	// Reason says what is wrong, with the times involved.
	Reason string
	// SafeAt is the earliest time Field may take (or the step become
	// safe); zero when waiting or a later time does not help.
	SafeAt time.Time
}

func (e *RuleError) Error() string {
	msg := ""
	if e.KeyID != "" || e.Index >= 0 {
		msg = "key " + strconv.Quote(e.KeyID)
		if e.Index >= 0 {
			msg += " (keys[" + strconv.Itoa(e.Index) + "])"
		}
		if e.Field != "" {
			msg += " " + e.Field
		}
		msg += ": "
	}
	msg += errs.Text(e.Rule)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if !e.SafeAt.IsZero() {
		msg += " (safe from " + stamp(e.SafeAt) + ")"
	}
	return errs.Msg(prefix, msg, nil)
}

// Is reports whether target is the error's Rule.
func (e *RuleError) Is(target error) bool { return target == e.Rule }

// stamp formats a time in messages.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
