package publish

import (
	"context"
	"errors"
	"time"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/rotation"
)

// step is one step under way: what it read.
type step struct {
	cfg *RotationConfig
	res *StepResult
	// the ring file read, its version, and its ring at now.
	file    *extsigner.RingFile
	version Version
	ring    *extsigner.Ring
	// the discovery document and the objects read, with their versions.
	site     *Site
	versions map[string]Version
}

// read reads the ring file and the store, and finds the action due.
func (r *Rotation) read(ctx context.Context) (*step, error) {
	now := r.cfg.Now().UTC().Truncate(time.Second)
	st := &step{cfg: &r.cfg, res: &StepResult{Now: now}}
	file, v, err := r.cfg.Ring.Read(ctx)
	if err != nil {
		return nil, err
	}
	st.file, st.version, st.res.Ring = file, v, file
	if err := st.open(ctx, file); err != nil {
		return nil, err
	}
	c := r.cfg.Cadence
	st.res.Propagation, st.res.RetireWait = max(st.ring.MinStaging(), c.Propagation), st.ring.RetireWait()
	if whole := st.res.Propagation + c.Delay + st.res.RetireWait; c.Every > 0 && c.Every < whole {
		return nil, &CadenceError{Every: c.Every, Whole: whole, Propagation: st.res.Propagation, Delay: c.Delay, RetireWait: st.res.RetireWait}
	}
	if err := st.readStore(ctx); err != nil {
		return nil, err
	}
	if err := st.decide(); err != nil {
		return nil, err
	}
	return st, nil
}

// open opens the ring file's keys and makes its ring and schedule at the
// step's time.
func (st *step) open(ctx context.Context, file *extsigner.RingFile) error {
	refused := func(err error) error {
		return &RotationError{Kind: ErrRingFile, What: "the ring file is refused", Err: err}
	}
	cfg, err := file.Open(ctx, st.cfg.Keys)
	if err != nil {
		return refused(err)
	}
	now := st.res.Now
	cfg.Now = func() time.Time { return now }
	ring, err := extsigner.NewRing(cfg)
	if err != nil {
		return refused(err)
	}
	policy := rotation.Policy{Propagation: ring.MinStaging(), MaxLifetime: ring.MaxTokenLifetime(), Skew: ring.RetireWait() - ring.MaxTokenLifetime()}
	keys := make([]rotation.Key, len(cfg.Schedule))
	entries := map[string]int{}
	var signing []int // the ring file's signing entries, in order
	for i, k := range file.Keys {
		if k.Key != "" {
			signing = append(signing, i)
		}
	}
	for i, k := range cfg.Schedule {
		keys[i] = rotation.Key{ID: k.Key.KeyID, Published: k.Published, Signs: k.Primary, Retired: k.Retired,
			VerifyOnly: k.Signer == nil, Unlisted: k.Key.ExcludeFromDiscovery}
		if k.Signer != nil {
			entries[k.Key.KeyID] = signing[len(entries)]
		}
	}
	sched, err := rotation.New(policy, keys)
	if err != nil {
		return refused(err)
	}
	st.ring, st.res.Schedule, st.res.Entries = ring, sched, entries
	return nil
}

// readStore reads the discovery document the store publishes and every
// copy of the key set: the one the discovery document names, and
// AzwiKeySet when the store has it.
func (st *step) readStore(ctx context.Context) error {
	store := st.cfg.Store
	if err := withTimeout(ctx, func(ctx context.Context) error { _, err := store.Preflight(ctx); return err }); err != nil {
		return err
	}
	st.versions = map[string]Version{}
	disc, err := st.get(ctx, DiscoveryName, oidc.MaxDiscoveryBytes)
	if errors.Is(err, ErrNotFound) {
		return &RotationError{Kind: ErrNoDiscovery, What: store.Location().String() + " publishes no discovery document", Object: DiscoveryName}
	}
	if err != nil {
		return err
	}
	st.site = &Site{Discovery: disc}
	md, err := st.site.Metadata()
	if err != nil {
		return &RotationError{Kind: ErrNoDiscovery, What: store.Location().URL(DiscoveryName) + " holds a discovery document that does not parse", Object: DiscoveryName, Err: errors.Unwrap(err)}
	}
	name, err := keySetObject(md, "")
	if err != nil {
		return err
	}
	main, _, err := st.readCopy(ctx, name, true)
	if err != nil {
		return err
	}
	st.res.Copies = append(st.res.Copies, KeySetCopy{Name: name, KeyIDs: main})
	if name == AzwiKeySet {
		return nil
	}
	ids, found, err := st.readCopy(ctx, AzwiKeySet, false)
	if found {
		st.site.Copies = []string{AzwiKeySet} // kept up to date with the key set
		st.res.Copies = append(st.res.Copies, KeySetCopy{Name: AzwiKeySet, KeyIDs: ids})
	}
	return err
}

// get reads an object, recording its version (the zero Version when
// absent).
func (st *step) get(ctx context.Context, name string, limit int64) ([]byte, error) {
	var data []byte
	var v Version
	err := withTimeout(ctx, func(ctx context.Context) (err error) {
		data, v, err = st.cfg.Store.Get(ctx, name, limit)
		return err
	})
	if err == nil || errors.Is(err, ErrNotFound) {
		st.versions[name] = v
	}
	return data, err
}

// readCopy reads a copy of the key set and returns its key IDs. A missing
// main copy publishes none (the step repairs it), a missing other copy is
// not found; a main copy that does not parse is refused, another copy
// that does not parse has nil key IDs (repaired). Any other failure stops
// the step: what the store publishes is unknown.
func (st *step) readCopy(ctx context.Context, name string, main bool) (ids []string, found bool, err error) {
	data, err := st.get(ctx, name, jwks.DefaultMaxSetBytes)
	switch {
	case errors.Is(err, ErrNotFound):
		return []string{}, false, nil
	case err != nil:
		return nil, false, &RotationError{Kind: ErrKeySetUnreadable, What: "reading the store's key set " + name, Object: name, Err: err}
	}
	parsed, err := jwks.ParseSet(data, jwks.ParseOptions{})
	if err != nil && !main {
		return nil, true, nil
	}
	if err != nil {
		return nil, true, &RotationError{Kind: ErrKeySetUnusable, What: st.cfg.Store.Location().URL(name) + " is not a usable key set", Object: name, Err: err}
	}
	ids = []string{}
	for _, k := range parsed.Keys {
		ids = append(ids, k.KeyID)
	}
	return ids, true, nil
}
