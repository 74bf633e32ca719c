package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/publish"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/keystore"
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

// checkClock refuses --now (the global clock flag) for a run that writes: a clock ahead
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
	if !f.dryRun {
		// One run at a time: the lock is held until the run ends.
		unlock, err := a.lockRing(f.ring)
		if err != nil {
			return err
		}
		defer unlock()
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
	if a.rotateRead != nil && !f.dryRun {
		a.rotateRead()
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
