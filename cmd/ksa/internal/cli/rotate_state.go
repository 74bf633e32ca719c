package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ksa-go/ksa/cmd/ksa/internal/publish"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
)

// ringEntry is a signing key of the ring file with its key ID.
type ringEntry struct {
	index int
	kid   string
	extsigner.RingFileKey
}

// rotationState is what a run reads: the ring file, the keys it publishes
// now, and what the store publishes.
type rotationState struct {
	data []byte
	file *extsigner.RingFile
	ring *extsigner.Ring
	// signing are the ring file's signing keys, with their kids.
	signing []ringEntry
	// known are every kid the ring file names.
	known map[string]bool
	// expected are the kids the ring publishes in discovery now.
	expected []string
	// the store, its documents and its kids.
	store     publish.Store
	loc       publish.Location
	docs      *siteDocs
	storeKIDs []string
	// copies are every copy of the key set the store publishes (the one
	// the discovery document points to first), with their kids.
	copies []storeCopy
	// versions are the versions of the objects read from the store (the
	// zero Version: read absent); the run writes each only if the store
	// still holds that version.
	versions map[string]publish.Version
}

// readRing reads and opens the ring file, and works out what its ring
// publishes now.
func (f *rotateFlags) readRing(ctx context.Context, a *app, now time.Time) (*rotationState, error) {
	data, err := readInput(f.ring, nil, extsigner.MaxRingFileBytes)
	if err != nil {
		return nil, ringFileReadError(f.ring, err)
	}
	file, err := parseRingFile(data)
	if err != nil {
		return nil, ringFileError(f.ring, err)
	}
	st := &rotationState{data: data, file: file}
	if err := st.open(ctx, a, f.ring, now); err != nil {
		return nil, err
	}
	return st, nil
}

// open opens the ring file's keys and makes its ring at now.
func (st *rotationState) open(ctx context.Context, a *app, path string, now time.Time) error {
	cfg, err := st.file.Open(ctx, a.keyOpener())
	if err != nil {
		return ringFileError(path, err)
	}
	cfg.Now = func() time.Time { return now }
	ring, err := extsigner.NewRing(cfg)
	if err != nil {
		return ringFileError(path, err)
	}
	st.ring, st.signing, st.known, st.expected = ring, nil, map[string]bool{}, nil
	// A signing key is one element of the schedule, with its signer, in
	// the order of the file.
	var signers []extsigner.ScheduledKey
	for _, k := range cfg.Schedule {
		st.known[k.Key.KeyID] = true
		if k.Signer != nil {
			signers = append(signers, k)
		}
	}
	for i, k := range st.file.Keys {
		if k.Key != "" {
			st.signing = append(st.signing, ringEntry{index: i, kid: signers[len(st.signing)].Key.KeyID, RingFileKey: k})
		}
	}
	for _, k := range ring.KeySet().Keys {
		if !k.ExcludeFromDiscovery {
			st.expected = append(st.expected, k.KeyID)
		}
	}
	return nil
}

// readStore reads the documents the store publishes: the issuer comes
// from its discovery document, the kids from its key set.
func (st *rotationState) readStore(ctx context.Context, loc publish.Location) error {
	store, err := publish.Open(ctx, loc, publish.Config{})
	if err != nil {
		return publishError(err)
	}
	if err := withTimeout(ctx, func(ctx context.Context) error { _, err := store.Preflight(ctx); return err }); err != nil {
		return publishError(err)
	}
	const first = "publish the issuer first: ksa issuer render, then ksa issuer publish --to the same location"
	st.versions = map[string]publish.Version{}
	get := func(name string, limit int64) ([]byte, error) {
		var data []byte
		var v publish.Version
		err := withTimeout(ctx, func(ctx context.Context) (err error) {
			data, v, err = store.GetVersion(ctx, name, limit)
			return err
		})
		if err == nil || errors.Is(err, publish.ErrNotFound) {
			st.versions[name] = v
		}
		return data, err
	}
	disc, err := get(discoveryName, oidc.MaxDiscoveryBytes)
	if errors.Is(err, publish.ErrNotFound) {
		return fail(nil, first, "%s publishes no discovery document (nothing was written)", loc)
	}
	if err != nil {
		return publishError(err)
	}
	md, err := oidc.ParseMetadata(disc)
	if err != nil {
		return fail(nil, first, "%s holds a discovery document that does not parse: %s (nothing was written)", store.Location().URL(discoveryName), libText(err))
	}
	docs := &siteDocs{issuer: md.Issuer, jwksURI: md.JWKSURI, discovery: disc}
	objs, err := docs.objects(loc, "")
	if err != nil {
		return err
	}
	// Every copy of the key set publish writes is read: a copy an
	// interrupted run left behind is repaired like the key set itself.
	st.store, st.loc, st.docs = store, loc, docs
	if st.storeKIDs, _, err = st.readCopy(ctx, get, objs[0].Name, true); err != nil {
		return err
	}
	st.copies = append(st.copies, storeCopy{name: objs[0].Name, kids: st.storeKIDs})
	if objs[0].Name != azwiKeySetName {
		// publish writes the azwi copy when the store has one.
		kids, found, err := st.readCopy(ctx, get, azwiKeySetName, false)
		switch {
		case err != nil:
			return err
		case found:
			docs.azwi = []byte{} // kept up to date with the key set
			st.copies = append(st.copies, storeCopy{name: azwiKeySetName, kids: kids})
		}
	}
	return nil
}

// storeCopy is a copy of the key set in the store, and the kids it
// publishes (nil when it does not parse: it is repaired).
type storeCopy struct {
	name string
	kids []string
}

// readCopy reads the store's key set, the one the discovery document
// points to (main) or a copy of it, and returns its kids. A missing main
// key set publishes none (the run repairs it), a missing copy is not
// found; a key set that does not parse is refused when it is the
// main one, and repaired (nil kids) when it is a copy. Any other failure
// stops the run: what the store publishes is unknown.
func (st *rotationState) readCopy(ctx context.Context, get func(string, int64) ([]byte, error), name string, main bool) (kids []string, found bool, err error) {
	data, err := get(name, jwks.DefaultMaxSetBytes)
	switch {
	case errors.Is(err, publish.ErrNotFound):
		return []string{}, false, nil
	case err != nil:
		return nil, false, keySetReadError(err)
	}
	parsed, err := jwks.ParseSet(data, jwks.ParseOptions{})
	if err != nil {
		if !main {
			return nil, true, nil
		}
		return nil, true, fail(nil, "find out what wrote it, then delete it and run the same ksa issuer rotate again: it publishes the key set the ring file publishes",
			"%s is not a usable key set: %s (nothing was written)", st.store.Location().URL(name), libText(err))
	}
	kids = []string{}
	for _, k := range parsed.Keys {
		kids = append(kids, k.KeyID)
	}
	return kids, true, nil
}

// keySetReadError is a key set, or a copy of it, the store could not
// serve: the run stops, since what the store publishes is unknown.
func keySetReadError(err error) error {
	what, cause, fix := "reading the store's key set", err, "check the store and its access"
	var pe *publish.Error
	if errors.As(err, &pe) {
		what, cause = pe.What, pe.Err
		if pe.Fix != "" {
			fix = pe.Fix
		}
	}
	return fail(cause, fix+", then run the same ksa issuer rotate again", "%s (nothing was written)", what)
}

// stageKeys are the ring's signing keys at now by what they do.
type stageKeys struct {
	current *ringEntry   // signs now
	old     []*ringEntry // signed before current, not retired
	next    *ringEntry   // published or scheduled, not signing yet
}

// stage works out the stage at now, and refuses a ring and store it
// cannot move on from.
func (st *rotationState) stage(now time.Time, res *scheduledRotation) (stageKeys, error) {
	var sk stageKeys
	var signed, waiting []*ringEntry
	for i := range st.signing {
		e := &st.signing[i]
		if !e.Retired.IsZero() && !e.Retired.After(now) {
			continue
		}
		switch {
		case !e.Primary.IsZero() && !e.Primary.After(now):
			signed = append(signed, e)
		default:
			waiting = append(waiting, e)
		}
	}
	slices.SortFunc(signed, func(a, b *ringEntry) int { return a.Primary.Compare(b.Primary) })
	if len(signed) == 0 {
		return sk, fail(nil, "give a key of the ring file a primary time", "the ring file names no key that signs at %s", stamp(now))
	}
	sk.current, sk.old = signed[len(signed)-1], signed[:len(signed)-1]
	switch {
	case len(waiting) > 1:
		return sk, fail(nil, "keep one next key in the ring file and remove the others", "the ring file names %d next keys (keys[%d] and keys[%d]): a rotation moves one key at a time", len(waiting), waiting[0].index, waiting[1].index)
	case len(waiting) == 1 && len(sk.old) > 0:
		return sk, fail(nil, "wait until the old key is retired (ksa issuer rotate --to retires it), then add the next key", "the ring file names a next key (keys[%d]) while an old key (keys[%d]) is not retired yet", waiting[0].index, sk.old[0].index)
	case len(waiting) == 1:
		sk.next = waiting[0]
		if sk.next.published().IsZero() {
			return sk, fail(nil, "give keys["+fmt.Sprint(sk.next.index)+"] a published time", "the ring file's keys[%d] has no published time: how long relying parties have had it is unknown", sk.next.index)
		}
	}
	res.Signing = sk.current.kid
	res.Stage = stageSteady
	if sk.next != nil {
		res.Stage, res.Next = stageNextPublished, sk.next.kid
	}
	for _, o := range sk.old {
		res.Stage = stageNextSigns
		res.Old = append(res.Old, o.kid)
	}
	for _, c := range st.copies {
		for _, kid := range c.kids {
			if !st.known[kid] {
				return sk, fail(nil, "add the key to the ring file (publicKeys, with publishInDiscovery) if it must stay published, or remove it from the store's key set yourself",
					"%s publishes key %s in %s, which the ring file never had: the ring and the store disagree (nothing was written)", st.loc, termSafe(kid), c.name)
			}
		}
	}
	return sk, nil
}

// drift compares every copy of the key set in the store with what the
// ring file publishes now: the kids missing from any copy, the kids any
// copy has that the ring file does not publish, and what each copy lacked.
func (st *rotationState) drift() (missing, extra, lacked []string) {
	for i, c := range st.copies {
		m := without(st.expected, c.kids)
		for _, kid := range m {
			if !slices.Contains(missing, kid) {
				missing = append(missing, kid)
			}
		}
		for _, kid := range without(c.kids, st.expected) {
			if !slices.Contains(extra, kid) {
				extra = append(extra, kid)
			}
		}
		switch {
		case len(m) == 0:
		case i == 0:
			lacked = append(lacked, "the store lacked kid "+strings.Join(m, ", kid "))
		case c.kids == nil:
			lacked = append(lacked, c.name+" did not parse")
		default:
			lacked = append(lacked, c.name+" lacked kid "+strings.Join(m, ", kid "))
		}
	}
	return missing, extra, lacked
}

// published is the entry's published time (its primary time when it has
// none).
func (e *ringEntry) published() time.Time {
	if e.Published.IsZero() {
		return e.Primary
	}
	return e.Published
}
