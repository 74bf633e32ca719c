package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/cmd/ksa/internal/publish"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/oidc"
)

// publishMaxAge is the max-age of publishCacheControl: how long a relying
// party may keep a key set the store served.
const publishMaxAge = 3600 * time.Second

// defaultEvery is the default --every: a signing key signs about 90 days.
const defaultEvery = 2160 * time.Hour

// datePlaceholder in --next-key is replaced by the run's time, digits
// only (a valid PKCS #11 hex id too).
const (
	datePlaceholder = "{date}"
	dateLayout      = "20060102150405"
)

// The stages of a scheduled rotation.
const (
	stageSteady        = "steady"
	stageNextPublished = "next-published"
	stageNextSigns     = "next-signs"
)

// The changes a run of a scheduled rotation makes, at most one a run.
const (
	actionRepair      = "repair"
	actionPublishNext = "publish-next"
	actionSignNext    = "sign-next"
	actionRetireOld   = "retire-old"
)

// scheduledRotation is what "ksa issuer rotate --ring FILE --to URL"
// prints.
type scheduledRotation struct {
	Now    time.Time `json:"now"`
	DryRun bool      `json:"dry_run,omitempty"`
	// Stage is the stage found: steady, next-published or next-signs.
	Stage string `json:"stage"`
	// Signing is the kid of the key that signs now.
	Signing string `json:"signing_kid"`
	// Next is the kid of the next key, published and not signing yet.
	Next string `json:"next_kid,omitempty"`
	// Old are the kids of the keys that signed before Signing and are
	// still published.
	Old []string `json:"old_kids,omitempty"`
	// Store are the kids the store published when the run started.
	Store []string `json:"store_kids"`
	// Action names the run's change (would-be change, in a dry run):
	// repair, publish-next, sign-next or retire-old; empty while it waits.
	Action string `json:"action,omitempty"`
	// Changes are what the run changed, in order (would change, in a dry
	// run); none while it waits.
	Changes []string `json:"changes,omitempty"`
	// Withdrawn are kids the run removed from the store.
	Withdrawn []string `json:"withdrawn_keys,omitempty"`
	// Waiting says what the next change waits for, when it is not due.
	Waiting string `json:"waiting,omitempty"`
	// Plan are the stage changes to come, each at its earliest time.
	Plan []scheduledStep `json:"plan"`
}

// scheduledStep is a stage change of a scheduled rotation.
type scheduledStep struct {
	At     time.Time `json:"at"`
	Action string    `json:"action"`
}

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
}

// checkScheduleFlags refuses what does not go with --to, before anything
// is read.
func (f *rotateFlags) checkScheduleFlags(cmd *cobra.Command) error {
	for _, fl := range []string{"issuer", "signing-key", "out", "key", "jwks-uri", "max-token-lifetime", "ring-out"} {
		if cmd.Flags().Changed(fl) {
			return usage("drop --"+fl+": with --to, the ring file holds the keys and their lifetime, the store the issuer, and --ring is rotated in place", "--%s does not go with --to", fl)
		}
	}
	switch {
	case f.ring == "":
		return usage("give --ring FILE, the ring file of ksa signer serve", "--to needs --ring")
	case f.propagation < publishMaxAge:
		return usage(fmt.Sprintf("give --propagation of at least %s, plus the time relying parties take to refresh (24h is usual)", span(publishMaxAge)),
			"--propagation %s is shorter than the max-age the store serves the key set with (%s): a relying party could miss the next key", span(f.propagation), span(publishMaxAge))
	case f.publishDelay < 0:
		return usage("give --publish-delay the time every signer takes to read a new ring file, such as 1m", "--publish-delay %s is negative", f.publishDelay)
	case f.every <= 0:
		return usage("give --every a key age such as 2160h", "--every %s is not positive", f.every)
	}
	return nil
}

// checkClock refuses the hidden --now for a run that writes: a clock ahead
// of the real one would withdraw keys whose tokens are still live. Tests
// that compress a rotation's hours name --insecure-now.
func (f *rotateFlags) checkClock(a *app) error {
	switch {
	case f.insecureNow && a.nowFlag == "":
		return usage("give --now with --insecure-now", "--insecure-now goes with --now")
	case a.nowFlag != "" && !f.dryRun && !f.insecureNow:
		return usage("drop --now (the rotation writes on the real clock), or add --dry-run to see the plan at that time",
			"--now with --to writes on a clock that is not the real one: keys whose tokens are still live could be withdrawn")
	}
	return nil
}

// nextKeyRef is --next-key at now, checked on every run (not only on the
// run that creates it). A file needs {date}: the next rotation must not
// find the key it would create already there.
func (f *rotateFlags) nextKeyRef(now time.Time) (string, error) {
	ref := strings.ReplaceAll(f.next, datePlaceholder, now.Format(dateLayout))
	r, err := parseKeyRef(ref, "--next-key", true)
	if err != nil {
		return "", err
	}
	if r.Scheme() == keystore.SchemeFile && !strings.Contains(f.next, datePlaceholder) {
		return "", usage("give --next-key a "+datePlaceholder+" placeholder, such as sa-"+datePlaceholder+".key: every rotation creates a new file",
			"--next-key %s has no %s: the second rotation would find the key file already there", f.next, datePlaceholder)
	}
	return ref, nil
}

// runScheduled is one run of a scheduled rotation: it reads the ring file
// and the store, repairs what an interrupted run left, or moves the
// rotation at most one stage when its wait is over.
func (f *rotateFlags) runScheduled(a *app, cmd *cobra.Command) error {
	if err := f.checkScheduleFlags(cmd); err != nil {
		return err
	}
	loc, err := publish.ParseLocation(f.to)
	if err != nil {
		return publishUsage(err)
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if err := f.checkClock(a); err != nil {
		return err
	}
	now := a.now().UTC().Truncate(time.Second)
	if _, err := f.nextKeyRef(now); err != nil {
		return err
	}
	st, err := f.readRing(ctx, a, now)
	if err != nil {
		return err
	}
	// The whole rotation must fit in --every: a key signs at least until
	// the key after it has been published, signed and outlived it.
	propagation := max(f.propagation, st.ring.MinStaging())
	if whole := propagation + f.publishDelay + st.ring.RetireWait(); f.every < whole {
		return usage(fmt.Sprintf("give --every of at least %s", span(whole)),
			"--every %s is shorter than the whole rotation (%s: --propagation %s, --publish-delay %s, then the ring's longest token lifetime, skew and leeway)", span(f.every), span(whole), span(propagation), span(f.publishDelay))
	}
	if err := st.readStore(ctx, loc); err != nil {
		return err
	}
	res := &scheduledRotation{Now: now, DryRun: f.dryRun, Store: st.storeKIDs}
	stage, err := st.stage(now, res)
	if err != nil {
		return err
	}
	if err := f.step(ctx, a, cmd, st, stage, now, propagation, res); err != nil {
		return err
	}
	return printData(a.stdout, f.format, res, func(w io.Writer) { printScheduled(w, res, f.to) })
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
	get := func(name string, limit int64) ([]byte, error) {
		var data []byte
		err := withTimeout(ctx, func(ctx context.Context) (err error) {
			data, err = store.Get(ctx, name, limit)
			return err
		})
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

// stageTimes are the earliest times of a rotation's stage changes.
type stageTimes struct {
	// delay is --publish-delay: a key made the signing key signs that long
	// after the run.
	every, propagation, delay, retireWait time.Duration
}

// planSteady plans a rotation from the steady stage: the key signing since
// primary is followed after --every.
func (t stageTimes) planSteady(now, primary time.Time, signing string) []scheduledStep {
	next := later(primary.Add(t.every), now)
	sign := next.Add(t.propagation)
	return []scheduledStep{
		{next, "create the next key and publish it beside kid " + signing},
		{sign, "the next key signs (kid " + signing + " stays published)"},
		{sign.Add(t.delay + t.retireWait), "retire kid " + signing + ": every token it signed has expired"},
	}
}

// planNextPublished plans a rotation whose next key is published; sign is
// when a run makes it sign, delay how long after that it signs.
func (t stageTimes) planNextPublished(sign time.Time, delay time.Duration, signing, next string) []scheduledStep {
	return []scheduledStep{
		{sign, next + " signs (kid " + signing + " stays published)"},
		{sign.Add(delay + t.retireWait), "retire kid " + signing + ": every token it signed has expired"},
		{sign.Add(delay + t.every), "create the key after " + next + " and publish it"},
	}
}

// planNextSigns plans a rotation whose next key signs since primary;
// retire is when the old keys may be retired.
func (t stageTimes) planNextSigns(retire, primary time.Time, signing string, old []string) []scheduledStep {
	return []scheduledStep{
		{retire, "retire kid " + strings.Join(old, ", kid ") + ": every token signed before kid " + signing + " signs has expired"},
		{later(primary.Add(t.every), retire), "create the key after kid " + signing + " and publish it"},
	}
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// step repairs the store, or makes the stage change that is due, or says
// what it waits for; and plans what follows.
func (f *rotateFlags) step(ctx context.Context, a *app, cmd *cobra.Command, st *rotationState, sk stageKeys, now time.Time, propagation time.Duration, res *scheduledRotation) error {
	t := stageTimes{every: f.every, propagation: propagation, delay: f.publishDelay, retireWait: st.ring.RetireWait()}
	cur := sk.current
	signAt := func() time.Time {
		if !sk.next.Primary.IsZero() {
			return sk.next.Primary // the ring file schedules it
		}
		return sk.next.published().Add(propagation)
	}
	retireAt := func() time.Time {
		at := cur.Primary.Add(t.retireWait)
		for _, o := range sk.old {
			at = later(at, o.Retired)
		}
		return at
	}
	switch res.Stage {
	case stageSteady:
		res.Plan = t.planSteady(now, cur.Primary, cur.kid)
	case stageNextPublished:
		delay := t.delay
		if !sk.next.Primary.IsZero() {
			delay = 0 // the ring file schedules it
		}
		res.Plan = t.planNextPublished(later(signAt(), now), delay, cur.kid, "kid "+sk.next.kid)
	default:
		res.Plan = t.planNextSigns(later(retireAt(), now), cur.Primary, cur.kid, res.Old)
	}

	// Repair first: the store publishes what the ring file publishes now.
	missing, extra, lacked := st.drift()
	if sk.next != nil && !sk.next.Primary.IsZero() {
		// The ring file schedules the switch itself (ksa issuer rotate
		// --ring --ring-out, or a hand edit): relying parties must have had
		// the key --propagation by then, counted from when the store got it.
		got, since := sk.next.published(), "its published time"
		if slices.Contains(missing, sk.next.kid) {
			got, since = now, "now, when this run publishes it"
		}
		if sk.next.Primary.Before(got.Add(propagation)) {
			return fail(nil, fmt.Sprintf("move keys[%d].primary to %s or later, or remove it and let ksa issuer rotate --to schedule the switch (do not mix it with ksa issuer rotate --ring-out)", sk.next.index, stamp(got.Add(propagation))),
				"the ring file makes kid %s the signing key at %s, less than --propagation %s after %s (%s): relying parties could miss it (nothing was written)", termSafe(sk.next.kid), stamp(sk.next.Primary), span(propagation), since, stamp(got))
		}
	}
	if len(missing) > 0 || len(extra) > 0 {
		if sk.next != nil && sk.next.Primary.IsZero() && slices.Contains(missing, sk.next.kid) {
			// Relying parties may not have the next key: its wait starts
			// again, and the ring file says so before the store has it.
			st.file.Keys[sk.next.index].Published = now
			res.Changes = append(res.Changes, fmt.Sprintf("restart the wait of kid %s, missing from the store (an interrupted run): published from %s in %s", sk.next.kid, stamp(now), f.ring))
			if !f.dryRun {
				if err := a.writeRing(f.ring, st.file, st.data); err != nil {
					return err
				}
			}
			res.Plan = t.planNextPublished(now.Add(propagation), t.delay, cur.kid, "kid "+sk.next.kid)
		}
		what := "publish the key set the ring file publishes (kids " + strings.Join(st.expected, ", ") + ") to " + f.to
		for _, l := range lacked {
			what += "; " + l
		}
		if len(extra) > 0 {
			what += "; the ring file no longer publishes kid " + strings.Join(extra, ", kid ")
		}
		res.Action, res.Changes = actionRepair, append(res.Changes, what)
		return f.publishRing(ctx, a, st, now, res)
	}

	switch res.Stage {
	case stageSteady:
		if at := cur.Primary.Add(f.every); now.Before(at) {
			res.Waiting = fmt.Sprintf("until %s (%s): kid %s has signed since %s, less than --every %s", stamp(at), relTime(at, now), cur.kid, stamp(cur.Primary), span(f.every))
			return nil
		}
		return f.addNext(ctx, a, cmd, st, now, t, res)
	case stageNextPublished:
		if at := signAt(); now.Before(at) {
			why := fmt.Sprintf("kid %s is published since %s, and relying parties need --propagation %s to fetch it", sk.next.kid, stamp(sk.next.published()), span(propagation))
			if !sk.next.Primary.IsZero() {
				why = fmt.Sprintf("the ring file makes kid %s the primary then, and the signers follow it by themselves", sk.next.kid)
			}
			res.Waiting = fmt.Sprintf("until %s (%s): %s", stamp(at), relTime(at, now), why)
			return nil
		}
		// The store has the next key (checked above) since signAt's wait.
		// It signs --publish-delay from now: every signer reads the ring
		// file by then, and none signs with it before another could.
		switchAt := now.Add(f.publishDelay)
		st.file.Keys[sk.next.index].Primary = switchAt
		res.Action, res.Changes = actionSignNext, append(res.Changes, fmt.Sprintf("make kid %s the signing key from %s (--publish-delay %s from now) in %s (kid %s stays published)", sk.next.kid, stamp(switchAt), span(f.publishDelay), f.ring, cur.kid))
		res.Plan = t.planNextSigns(switchAt.Add(t.retireWait), switchAt, sk.next.kid, []string{cur.kid})
		if f.dryRun {
			return nil
		}
		return a.writeRing(f.ring, st.file, st.data)
	}
	if at := retireAt(); now.Before(at) {
		res.Waiting = fmt.Sprintf("until %s (%s): tokens signed before kid %s signed (since %s) live until then (the ring's longest token lifetime, skew and leeway)", stamp(at), relTime(at, now), cur.kid, stamp(cur.Primary))
		return nil
	}
	for _, o := range sk.old {
		st.file.Keys[o.index].Retired = now
	}
	res.Action, res.Changes = actionRetireOld, append(res.Changes,
		fmt.Sprintf("retire kid %s from %s in %s", strings.Join(res.Old, ", kid "), stamp(now), f.ring),
		fmt.Sprintf("publish the key set without kid %s to %s: every token it signed has expired", strings.Join(res.Old, ", kid "), f.to))
	res.Plan = t.planSteady(now, cur.Primary, cur.kid)
	if f.dryRun {
		return nil
	}
	if err := a.writeRing(f.ring, st.file, st.data); err != nil {
		return err
	}
	return f.publishRing(ctx, a, st, now, res)
}

// addNext creates the next key, adds it to the ring file as published
// (not signing), then publishes it.
func (f *rotateFlags) addNext(ctx context.Context, a *app, cmd *cobra.Command, st *rotationState, now time.Time, t stageTimes, res *scheduledRotation) error {
	ref, err := f.nextKeyRef(now)
	if err != nil {
		return err
	}
	r, err := parseKeyRef(ref, "--next-key", true)
	if err != nil {
		return err
	}
	if err := f.nextSpec(a, cmd, st.file); err != nil {
		return err
	}
	const keyFix = "give --next-key a " + datePlaceholder + " placeholder, or another name (keys are never overwritten)"
	isFile := r.Scheme() == keystore.SchemeFile
	if isFile {
		for _, p := range []string{ref, publicPath(ref)} {
			if _, err := a.checkWritable(output{path: p, flag: "--next-key", existsFix: keyFix}); err != nil {
				return err
			}
		}
	}
	// Keys retired by now are published no more: they leave the file. The
	// file with the next key is checked before the key is made.
	next := *st.file
	next.Keys = nil
	for _, k := range st.file.Keys {
		if k.Retired.IsZero() || k.Retired.After(now) {
			next.Keys = append(next.Keys, k)
		}
	}
	if err := (&extsigner.RingFile{RefreshHint: next.RefreshHint, MaxTokenLifetime: next.MaxTokenLifetime, MinStaging: next.MinStaging,
		Keys: append(slices.Clone(next.Keys), extsigner.RingFileKey{Key: ref, Published: now})}).Check(); err != nil {
		return ringFileError(f.ring, err)
	}
	res.Action, res.Changes = actionPublishNext, append(res.Changes,
		fmt.Sprintf("create the next key, %s, and add it to %s, published from %s, not signing", ref, f.ring, stamp(now)),
		"publish the key set with it to "+f.to)
	cur := res.Signing
	if f.dryRun {
		res.Plan = t.planNextPublished(now.Add(t.propagation), t.delay, cur, "the next key")
		return nil
	}
	var outs []output
	entry := extsigner.RingFileKey{Published: now}
	if isFile {
		s, err := f.spec.generate()
		if err != nil {
			return err
		}
		priv, pub, err := encodeKeyPair(s)
		if err != nil {
			return fail(err, bugFix, "encoding the key")
		}
		if entry.Key, err = filepath.Abs(ref); err != nil {
			return fail(err, "give another --next-key", "--next-key %s", ref)
		}
		outs = append(outs,
			output{path: ref, data: priv, perm: 0o600, flag: "--next-key", existsFix: keyFix},
			output{path: publicPath(ref), data: pub, perm: 0o644, flag: "--next-key", existsFix: keyFix})
	} else {
		created, err := a.createStoreKey(ctx, r, f.spec, "--next-key", "")
		if err != nil {
			return err
		}
		entry.Key = created.Ref
	}
	next.Keys = append(next.Keys, entry)
	if err := next.Check(); err != nil {
		return ringFileError(f.ring, err)
	}
	if err := a.writeRing(f.ring, &next, st.data, outs...); err != nil {
		return err
	}
	st.file = &next
	if err := f.publishRing(ctx, a, st, now, res); err != nil {
		return err
	}
	kid := st.signing[len(st.signing)-1].kid
	res.Changes[0] = fmt.Sprintf("create the next key, %s, kid %s, and add it to %s, published from %s, not signing", ref, kid, f.ring, stamp(now))
	res.Plan = t.planNextPublished(now.Add(t.propagation), t.delay, cur, "kid "+kid)
	return nil
}

// writeRing writes the ring file in place, in the format it was read in
// (like, its bytes when the run read it), with the other outputs (the next
// key's files). A ring file changed since the run read it (another run)
// is refused. A symbolic link is written through, to its target; the
// file keeps its mode.
func (a *app) writeRing(path string, file *extsigner.RingFile, like []byte, others ...output) error {
	data, err := ringFileBytes(file, like)
	if err != nil {
		return err
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fail(err, "check --ring", "resolving %s", path)
	}
	fi, err := os.Stat(target)
	if err != nil {
		return fail(err, "check --ring", "checking %s", path)
	}
	now, err := readInput(path, nil, extsigner.MaxRingFileBytes)
	if err != nil || !bytes.Equal(now, like) {
		return fail(err, "run one ksa issuer rotate at a time (a CronJob with concurrencyPolicy: Forbid), then run it again",
			"%s changed while this run read the store: another run or an edit wrote it (nothing was written)", path)
	}
	err = a.writeOutputs(append(others, output{path: target, data: data, perm: fi.Mode().Perm(), flag: "--ring", replace: replaceForced})...)
	var e *Error
	if errors.As(err, &e) && e.Fix == "choose a writable path for --ring" {
		e.Fix = "give --ring a file the run may write: a ring file mounted from a ConfigMap is read-only; rotate a writable copy and update the ConfigMap from it"
	}
	return err
}

// ringFileBytes encodes a ring file as JSON, or as YAML when like, the
// file it replaces, is not JSON.
func ringFileBytes(file *extsigner.RingFile, like []byte) ([]byte, error) {
	out := file.AppendJSON(nil)
	if isJSON(like) {
		return out, nil
	}
	y, err := yaml.JSONToYAML(out)
	if err != nil {
		return nil, fail(err, bugFix, "writing the ring file as YAML")
	}
	return y, nil
}

// publishRing publishes the key set the ring publishes now to the store,
// through the publication's own order: key set first, discovery last.
func (f *rotateFlags) publishRing(ctx context.Context, a *app, st *rotationState, now time.Time, res *scheduledRotation) error {
	if f.dryRun {
		return nil
	}
	// The ring the file makes now: the keys it publishes after the change.
	if err := st.open(ctx, a, f.ring, now); err != nil {
		return err
	}
	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: st.docs.issuer, JWKSURI: st.docs.jwksURI}, st.ring.KeySet().Keys)
	if err != nil {
		return fail(err, "check the keys of the ring file", "rendering the key set of %s", f.ring)
	}
	st.docs.keySet = docs.JWKS
	if st.docs.azwi != nil {
		st.docs.azwi = docs.JWKS
	}
	objs, err := st.docs.objects(st.loc, "")
	if err != nil {
		return err
	}
	res.Withdrawn = withdrawnKeys(ctx, st.store, objs[0].Name, docs.JWKS)
	written := make([]publishedObject, len(objs))
	for i, o := range objs {
		written[i] = publishedObject{Name: o.Name}
	}
	return putObjects(ctx, st.store, objs, written, "run the same ksa issuer rotate again: it publishes what the ring file publishes")
}

// span writes a duration of a plan: "90d", "1h2m1s".
func span(d time.Duration) string { return secs(int64(d / time.Second)) }

// without returns the elements of a that b lacks.
func without(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// stamp formats a time of a plan.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// printScheduled writes a run of a scheduled rotation as text. The kids
// come from the ring file's keys and the store: printed terminal-safe.
func printScheduled(w io.Writer, res *scheduledRotation, to string) {
	fmt.Fprintf(w, "stage: %s: kid %s signs", res.Stage, termSafe(res.Signing))
	if res.Next != "" {
		fmt.Fprintf(w, "; kid %s is the next key", termSafe(res.Next))
	}
	if len(res.Old) > 0 {
		fmt.Fprintf(w, "; kid %s signed before it", termSafeAll(res.Old, ", kid "))
	}
	if len(res.Store) == 0 {
		fmt.Fprintf(w, "\n%s publishes no key\n", termSafe(to))
	} else {
		fmt.Fprintf(w, "\n%s publishes kid %s\n", termSafe(to), termSafeAll(res.Store, ", kid "))
	}
	verb := "done"
	if res.DryRun {
		verb = "would do (dry run)"
	}
	for _, c := range res.Changes {
		fmt.Fprintf(w, "%s: %s\n", verb, termSafe(c))
	}
	for _, kid := range res.Withdrawn {
		fmt.Fprintf(w, "withdrawn as planned: kid %s is no longer published\n", termSafe(kid))
	}
	if res.Waiting != "" {
		fmt.Fprintf(w, "nothing to do: waiting %s\n", termSafe(res.Waiting))
	}
	fmt.Fprintln(w, "plan:")
	for _, s := range res.Plan {
		fmt.Fprintf(w, "  %s (%s): %s\n", stamp(s.At), relTime(s.At, res.Now), termSafe(s.Action))
	}
}
