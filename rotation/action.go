package rotation

import "time"

// Kind is what an [Action] does.
type Kind uint8

// The actions of a rotation, one per call of [Schedule.Next].
const (
	// Wait: nothing to do until Action.At.
	Wait Kind = iota + 1
	// Repair: publish the key set of now to every copy (a copy lacks a
	// key it must hold, or holds one to withdraw).
	Repair
	// PublishNext: make the next key, add it to the schedule published
	// from now, and publish it.
	PublishNext
	// SignNext: the next key signs from Action.At.
	SignNext
	// RetireOld: retire the old keys at Action.At, and withdraw them.
	RetireOld
)

// String returns "wait", "repair", "publish-next", "sign-next" or
// "retire-old".
func (k Kind) String() string {
	return name(int(k), "Kind", "wait", "repair", "publish-next", "sign-next", "retire-old")
}

// Stage is where a rotation stands.
type Stage uint8

// The stages of a rotation.
const (
	// StageSteady: one key signs; no next key, no old key.
	StageSteady Stage = iota + 1
	// StageNextPublished: a next key is published (or scheduled), not
	// signing yet.
	StageNextPublished
	// StageNextSigns: the signing key took over from old keys still
	// published.
	StageNextSigns
)

// String returns "steady", "next-published" or "next-signs".
func (s Stage) String() string {
	return name(int(s), "Stage", "steady", "next-published", "next-signs")
}

// Reason is what a [Wait] waits for.
type Reason uint8

// The reasons to wait.
const (
	// WaitEvery: the signing key has signed for less than Cadence.Every.
	WaitEvery Reason = iota + 1
	// WaitPropagation: the next key has been published for less than the
	// propagation time.
	WaitPropagation
	// WaitTokens: tokens the old keys signed may still be live.
	WaitTokens
	// WaitSchedule: a time the schedule writes (a publication, a switch,
	// a retirement) has not come.
	WaitSchedule
)

// String returns "every", "propagation", "tokens" or "schedule".
func (r Reason) String() string {
	return name(int(r), "Reason", "every", "propagation", "tokens", "schedule")
}

// Action is the one step [Schedule.Next] finds due, with the rotation's
// state and the plan of the steps after it.
type Action struct {
	// Kind is what to do.
	Kind Kind
	// At is, for Wait, until when (zero: nothing comes); for SignNext,
	// when the next key signs (now plus Cadence.Delay); now otherwise.
	At time.Time
	// For is what a Wait waits for.
	For Reason
	// Stage is the stage found.
	Stage Stage
	// Signer is the key that signs now; Next the next key (published or
	// scheduled, not signing yet), if any; Old the keys that signed before
	// Signer and are still published.
	Signer, Next string
	Old          []string
	// Missing are the listed keys some copy lacks; Extra the keys some
	// copy holds that the schedule does not publish now; Unknown those
	// the schedule never names. Any of them makes a Repair.
	Missing, Extra, Unknown []string
	// Restart, on a Repair, says the next key is missing from a copy
	// before it signs: it is published again from now, and SignsAt is
	// the earliest time it may sign then (its Signs time, when that is
	// later).
	Restart bool
	SignsAt time.Time
	// Plan are the steps after this one, each at its earliest time.
	Plan []Step
}

// Step is a step of a plan.
type Step struct {
	// At is the step's earliest time; Kind what it does.
	At   time.Time
	Kind Kind
	// Keys are the keys the step changes (none for a key not made yet).
	Keys []string
	// Signer is the key that signs just before the step; empty for a key
	// not made yet.
	Signer string
}
