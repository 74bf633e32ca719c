package issuercmd

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/cmd/ksa/internal/stores"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/rotation"
)

// publishMaxAge is the max-age of publish.CacheControl: how long a relying
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
			return base.Usage("drop --"+fl+": with --to, the ring file holds the keys and their lifetime, the store the issuer, and --ring is rotated in place", "--%s does not go with --to", fl)
		}
	}
	switch {
	case f.ring == "":
		return base.Usage("give --ring FILE, the ring file of ksa signer serve", "--to needs --ring")
	case f.propagation < publishMaxAge:
		return base.Usage(fmt.Sprintf("give --propagation of at least %s, plus the time relying parties take to refresh (24h is usual)", span(publishMaxAge)),
			"--propagation %s is shorter than the max-age the store serves the key set with (%s): a relying party could miss the next key", span(f.propagation), span(publishMaxAge))
	case f.publishDelay < 0:
		return base.Usage("give --publish-delay the time every signer takes to read a new ring file, such as 1m", "--publish-delay %s is negative", f.publishDelay)
	case f.every <= 0:
		return base.Usage("give --every a key age such as 2160h", "--every %s is not positive", f.every)
	}
	return nil
}

// checkClock refuses --now (the global clock flag) for a run that writes: a clock ahead
// of the real one would withdraw keys whose tokens are still live. Tests
// that compress a rotation's hours name --insecure-now.
func (f *rotateFlags) checkClock(a *base.App) error {
	switch {
	case f.insecureNow && a.NowFlag == "":
		return base.Usage("give --now with --insecure-now", "--insecure-now goes with --now")
	case a.NowFlag != "" && !f.dryRun && !f.insecureNow:
		return base.Usage("drop --now (the rotation writes on the real clock), or add --dry-run to see the plan at that time",
			"--now with --to writes on a clock that is not the real one: keys whose tokens are still live could be withdrawn")
	}
	return nil
}

// nextKeyRef is --next-key at now, checked on every run (not only on the
// run that creates it). A file needs {date}: the next rotation must not
// find the key it would create already there.
func (f *rotateFlags) nextKeyRef(now time.Time) (string, error) {
	ref := strings.ReplaceAll(f.next, datePlaceholder, now.Format(dateLayout))
	r, err := keyflags.ParseRef(ref, "--next-key", true)
	if err != nil {
		return "", err
	}
	if r.Scheme() == keystore.SchemeFile && !strings.Contains(f.next, datePlaceholder) {
		return "", base.Usage("give --next-key a "+datePlaceholder+" placeholder, such as sa-"+datePlaceholder+".key: every rotation creates a new file",
			"--next-key %s has no %s: the second rotation would find the key file already there", f.next, datePlaceholder)
	}
	return ref, nil
}

// runScheduled is one run of a scheduled rotation: the library's step
// (publish.Rotation) over the ring file and the store, worded.
func (f *rotateFlags) runScheduled(a *base.App, cmd *cobra.Command) error {
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
	now := a.Now().UTC().Truncate(time.Second)
	if _, err := f.nextKeyRef(now); err != nil {
		return err
	}
	if !f.dryRun {
		// One run at a time: the lock is held until the run ends.
		unlock, err := lockRing(a, f.ring)
		if err != nil {
			return err
		}
		defer unlock()
	}
	rot, err := f.rotation(ctx, a, cmd, loc, now)
	if err != nil {
		return err
	}
	step := rot.Step
	if f.dryRun {
		step = rot.Plan
	}
	sr, err := step(ctx)
	if err != nil {
		return f.stepError(err, loc)
	}
	if f.dryRun && sr.Action.Kind == rotation.PublishNext {
		if err := f.checkNextKey(a, cmd, sr); err != nil {
			return err
		}
	}
	res := f.worded(sr)
	return base.PrintData(a.Stdout, f.format, res, func(w io.Writer) { printScheduled(w, res, f.to) })
}

// rotation is the library's rotation of the flags: the ring file (YAML or
// JSON, in place), the store, the key opener, and the cadence.
func (f *rotateFlags) rotation(ctx context.Context, a *base.App, cmd *cobra.Command, loc publish.Location, now time.Time) (*publish.Rotation, error) {
	store, err := publish.Open(ctx, loc, publish.Config{Openers: stores.Openers()})
	if err != nil {
		return nil, publishError(err)
	}
	ring := &ringStore{path: f.ring, file: publish.NewFileRing(f.ring, publish.FileRingConfig{Parse: keyflags.ParseRingFile, Format: keyflags.RingFileBytes})}
	if f.rotateRead != nil && !f.dryRun {
		// Tests: once the run has read everything, before its first write.
		once := &sync.Once{}
		ring.beforeWrite = func() { once.Do(f.rotateRead) }
		store = &hookedStore{Store: store, beforeWrite: ring.beforeWrite}
	}
	rot, err := publish.NewRotation(publish.RotationConfig{Ring: ring, Store: store, Keys: a.KeyOpener(), NewKey: f.newKey(a, cmd),
		Cadence: rotation.Cadence{Every: f.every, Delay: f.publishDelay, Propagation: f.propagation},
		Now:     func() time.Time { return now }})
	if err != nil {
		return nil, base.Fail(err, base.BugFix, "the scheduled rotation")
	}
	return rot, nil
}

// checkNextKey checks, in a dry run, what making the next key would:
// its type, and that its files are not there.
func (f *rotateFlags) checkNextKey(a *base.App, cmd *cobra.Command, sr *publish.StepResult) error {
	if err := f.nextSpecLike(a, cmd, sr.Ring.Keys[sr.Entries[sr.Action.Signer]].Key); err != nil {
		return err
	}
	ref, err := f.nextKeyRef(sr.Now)
	if err != nil {
		return err
	}
	if kr, err := keyflags.ParseRef(ref, "--next-key", true); err != nil || kr.Scheme() != keystore.SchemeFile {
		return err
	}
	for _, p := range []string{ref, keyflags.PublicPath(ref)} {
		if _, err := a.CheckWritable(base.Output{Path: p, Flag: "--next-key", ExistsFix: nextKeyFix}); err != nil {
			return err
		}
	}
	return nil
}

// nextKeyFix is the fix of a --next-key whose file exists.
const nextKeyFix = "give --next-key a " + datePlaceholder + " placeholder, or another name (keys are never overwritten)"

// newKey makes the next key at --next-key: a key file pair (never
// overwritten), or a key in a key store, like the key that signs unless
// --type, --bits or --curve say otherwise. It returns the reference the
// ring file names it by.
func (f *rotateFlags) newKey(a *base.App, cmd *cobra.Command) func(context.Context, publish.KeyRequest) (string, error) {
	return func(ctx context.Context, r publish.KeyRequest) (string, error) {
		ref, err := f.nextKeyRef(r.Now)
		if err != nil {
			return "", err
		}
		kr, err := keyflags.ParseRef(ref, "--next-key", true)
		if err != nil {
			return "", err
		}
		if err := f.nextSpecLike(a, cmd, r.Current); err != nil {
			return "", err
		}
		if kr.Scheme() != keystore.SchemeFile {
			created, err := keyflags.CreateInStore(a, ctx, kr, f.spec, "--next-key", "")
			if err != nil {
				return "", err
			}
			return created.Ref, nil
		}
		s, err := f.spec.Generate()
		if err != nil {
			return "", err
		}
		priv, pub, err := keyflags.EncodePair(s)
		if err != nil {
			return "", base.Fail(err, base.BugFix, "encoding the key")
		}
		abs, err := filepath.Abs(ref)
		if err != nil {
			return "", base.Fail(err, "give another --next-key", "--next-key %s", ref)
		}
		return abs, a.WriteOutputs(
			base.Output{Path: ref, Data: priv, Perm: 0o600, Flag: "--next-key", ExistsFix: nextKeyFix},
			base.Output{Path: keyflags.PublicPath(ref), Data: pub, Perm: 0o644, Flag: "--next-key", ExistsFix: nextKeyFix})
	}
}
