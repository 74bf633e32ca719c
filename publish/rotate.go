package publish

import (
	"context"
	"slices"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/rotation"
)

// KeyRequest is what making the next key of a rotation knows.
type KeyRequest struct {
	// Now is the step's time.
	Now time.Time
	// Current is the ring file's reference of the key that signs now
	// (its RingFileKey.Key): the next key is usually of its type.
	Current string
}

// RotationConfig is what a [Rotation] takes.
type RotationConfig struct {
	// Ring holds the ring file the signers follow. Required.
	Ring RingStore
	// Store is where the issuer is published: the discovery document and
	// every copy of the key set. Required.
	Store Store
	// Keys opens the ring file's signing keys; nil means keystore.Files{}
	// (PEM file paths).
	Keys keystore.Opener
	// NewKey makes the next key and returns its reference for the ring
	// file (a PEM file path, a key store's URI): key creation belongs to
	// the key store. Called only by a step that publishes the next key,
	// never by [Rotation.Plan]. Required when Cadence.Every is set.
	NewKey func(ctx context.Context, r KeyRequest) (string, error)
	// Cadence is how the rotation moves (see rotation.Cadence): Every,
	// the rotation period; Delay, the time every signer takes to read a
	// changed ring file; Propagation, when longer than the ring's
	// minStaging, the least time between the store getting the next key
	// and its first signature (at least the max-age the key set is
	// served with). The zero Cadence repairs the store and follows the
	// ring file's own times.
	Cadence rotation.Cadence
	// Now is the clock; nil means time.Now. Times are truncated to the
	// second, as ring files write them.
	Now func() time.Time
}

// Rotation is the scheduled rotation of an issuer whose keys a ring file
// holds and whose documents a [Store] publishes: one [Rotation.Step] per
// run (a CronJob, a controller's reconcile), each reading the ring file
// and every copy of the key set, and making at most one change once its
// wait is over. See the package documentation.
type Rotation struct {
	cfg RotationConfig
}

// NewRotation checks cfg and returns its rotation.
func NewRotation(cfg RotationConfig) (*Rotation, error) {
	switch {
	case cfg.Ring == nil:
		return nil, &ksa.ConfigError{Field: "publish.RotationConfig.Ring", Reason: "is required"}
	case cfg.Store == nil:
		return nil, &ksa.ConfigError{Field: "publish.RotationConfig.Store", Reason: "is required"}
	case cfg.Cadence.Every > 0 && cfg.NewKey == nil:
		return nil, &ksa.ConfigError{Field: "publish.RotationConfig.NewKey", Reason: "is required with Cadence.Every"}
	}
	if cfg.Keys == nil {
		cfg.Keys = keystore.Files{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Rotation{cfg: cfg}, nil
}

// KeySetCopy is a copy of the key set the store publishes.
type KeySetCopy struct {
	// Name is the object's name.
	Name string
	// KeyIDs are the key IDs it publishes; nil when it does not parse.
	KeyIDs []string
}

// Lacks returns the key IDs of listed the copy does not publish, in
// listed's order; all of them when the copy does not parse.
func (c KeySetCopy) Lacks(listed []string) []string {
	var out []string
	for _, id := range listed {
		if !slices.Contains(c.KeyIDs, id) {
			out = append(out, id)
		}
	}
	return out
}

// StepResult is what a step found and did.
type StepResult struct {
	// Now is the step's time.
	Now time.Time
	// Action is the step rotation.Schedule.Next found due, its key IDs
	// the ring's; its Plan the steps after it (after a PublishNext, with
	// the new key's ID).
	Action rotation.Action
	// Schedule is the ring file's schedule when the step read it, and
	// Entries the index in the ring file of each signing key's ID.
	Schedule *rotation.Schedule
	Entries  map[string]int
	// Listed are the key IDs every copy must hold before the step.
	Listed []string
	// Copies are the copies of the key set the store published when the
	// step started, the one the discovery document names first.
	Copies []KeySetCopy
	// Ring is the ring file after the step (the one read, for a plan or
	// a step that writes none).
	Ring *extsigner.RingFile
	// NextKey is the reference of the key a PublishNext made, NextKeyID
	// its key ID.
	NextKey, NextKeyID string
	// Withdrawn are the key IDs the step removed from the store.
	Withdrawn []string
	// Propagation is the propagation time the step held the next key to:
	// the longer of the ring's minStaging and Cadence.Propagation.
	Propagation time.Duration
	// RetireWait is how long after a switch the former key is retired.
	RetireWait time.Duration
	// DryRun: a plan, nothing was written.
	DryRun bool
}

// Plan reads the ring file and the store and returns the step due, and
// the plan after it, without writing anything.
func (r *Rotation) Plan(ctx context.Context) (*StepResult, error) {
	st, err := r.read(ctx)
	if err != nil {
		return nil, err
	}
	st.res.DryRun = true
	return st.res, nil
}

// Step reads the ring file and every copy of the key set the store
// publishes, and makes the one change due: a Repair (the store publishes
// what the ring file publishes now; a next key missing from a copy is
// published again from now), PublishNext (NewKey makes the key, added to
// the ring file published and not signing, then published), SignNext
// (the ring file makes it sign Cadence.Delay from now), RetireOld (the
// ring file retires the old keys, then the store withdraws them), or
// nothing while it waits. The ring file is written only if unchanged
// since it was read (RingStore.Write), the store's objects only if
// unchanged (PutIf), the key set before the discovery document. A ring
// file and store it cannot move on from is a [*RotationError], before
// anything is written.
func (r *Rotation) Step(ctx context.Context) (*StepResult, error) {
	st, err := r.read(ctx)
	if err != nil {
		return nil, err
	}
	if err := st.act(ctx); err != nil {
		return st.res, err
	}
	return st.res, nil
}
