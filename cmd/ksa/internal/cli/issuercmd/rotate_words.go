package issuercmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/rotation"
)

// worded is a step of the library, in the command's words.
func (f *rotateFlags) worded(sr *publish.StepResult) *scheduledRotation {
	a := sr.Action
	res := &scheduledRotation{Now: sr.Now, DryRun: sr.DryRun, Stage: a.Stage.String(), Signing: a.Signer, Next: a.Next, Old: a.Old,
		Store: sr.Copies[0].KeyIDs, Withdrawn: sr.Withdrawn, Plan: planWords(a.Plan)}
	if a.Kind != rotation.Wait {
		res.Action = a.Kind.String()
	}
	switch a.Kind {
	case rotation.Wait:
		res.Waiting = f.waiting(sr)
	case rotation.Repair:
		res.Changes = f.repairs(sr)
	case rotation.PublishNext:
		ref, _ := f.nextKeyRef(sr.Now)
		made := fmt.Sprintf("create the next key, %s, and add it to %s, published from %s, not signing", ref, f.ring, stamp(sr.Now))
		if sr.NextKeyID != "" {
			made = fmt.Sprintf("create the next key, %s, kid %s, and add it to %s, published from %s, not signing", ref, sr.NextKeyID, f.ring, stamp(sr.Now))
		}
		res.Changes = []string{made, "publish the key set with it to " + f.to}
	case rotation.SignNext:
		res.Changes = []string{fmt.Sprintf("make kid %s the signing key from %s (--publish-delay %s from now) in %s (kid %s stays published)", a.Next, stamp(a.At), span(f.publishDelay), f.ring, a.Signer)}
	case rotation.RetireOld:
		old := strings.Join(a.Old, ", kid ")
		res.Changes = []string{fmt.Sprintf("retire kid %s from %s in %s", old, stamp(a.At), f.ring),
			fmt.Sprintf("publish the key set without kid %s to %s: every token it signed has expired", old, f.to)}
	}
	return res
}

// waiting says what a step waits for, and until when.
func (f *rotateFlags) waiting(sr *publish.StepResult) string {
	a := sr.Action
	until := fmt.Sprintf("until %s (%s): ", stamp(a.At), base.RelTime(a.At, sr.Now))
	cur, _ := sr.Schedule.Key(a.Signer)
	next, _ := sr.Schedule.Key(a.Next)
	switch {
	case a.For == rotation.WaitEvery:
		return until + fmt.Sprintf("kid %s has signed since %s, less than --every %s", a.Signer, stamp(cur.Signs), span(f.every))
	case a.For == rotation.WaitPropagation:
		return until + fmt.Sprintf("kid %s is published since %s, and relying parties need --propagation %s to fetch it", a.Next, stamp(next.Published), span(sr.Propagation))
	case a.Stage == rotation.StageNextPublished:
		return until + fmt.Sprintf("the ring file makes kid %s the primary then, and the signers follow it by themselves", a.Next)
	case a.Stage == rotation.StageNextSigns:
		return until + fmt.Sprintf("tokens signed before kid %s signed (since %s) live until then (the ring's longest token lifetime, skew and leeway)", a.Signer, stamp(cur.Signs))
	}
	return until + "the ring file changes then"
}

// repairs words a repair: the next key's wait restarted, and what each
// copy of the key set lacked or held too many.
func (f *rotateFlags) repairs(sr *publish.StepResult) []string {
	a := sr.Action
	var changes []string
	if i, ok := sr.Entries[a.Next]; ok && a.Restart && sr.Ring.Keys[i].Primary.IsZero() {
		changes = append(changes, fmt.Sprintf("restart the wait of kid %s, missing from the store (an interrupted run): published from %s in %s", a.Next, stamp(sr.Now), f.ring))
	}
	what := "publish the key set the ring file publishes (kids " + strings.Join(sr.Listed, ", ") + ") to " + f.to
	for i, c := range sr.Copies {
		lacked := c.Lacks(sr.Listed)
		switch {
		case len(lacked) == 0:
		case i == 0:
			what += "; the store lacked kid " + strings.Join(lacked, ", kid ")
		case c.KeyIDs == nil:
			what += "; " + c.Name + " did not parse"
		default:
			what += "; " + c.Name + " lacked kid " + strings.Join(lacked, ", kid ")
		}
	}
	if len(a.Extra) > 0 {
		what += "; the ring file no longer publishes kid " + strings.Join(a.Extra, ", kid ")
	}
	return append(changes, what)
}

// stepError words a step the library refused or failed.
func (f *rotateFlags) stepError(err error, loc publish.Location) error {
	var (
		ce      *publish.CadenceError
		re      *publish.RotationError
		partial *publish.PartialError
		e       *base.Error
	)
	const again = "run the same ksa issuer rotate again: it publishes what the ring file publishes"
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &ce):
		return base.Usage(fmt.Sprintf("give --every of at least %s", span(ce.Whole)),
			"--every %s is shorter than the whole rotation (%s: --propagation %s, --publish-delay %s, then the ring's longest token lifetime, skew and leeway)", span(ce.Every), span(ce.Whole), span(ce.Propagation), span(ce.Delay))
	case errors.As(err, &re):
		return f.rotationError(re)
	case errors.As(err, &partial):
		return publishPartial(partial.Err, loc, partial.Written, partial.Left, again)
	case errors.Is(err, publish.ErrChanged):
		e := publishError(err).(*base.Error)
		e.What += " (the store was left as it is)"
		e.Fix = changedFix(loc, again)
		return e
	}
	return publishError(err)
}

// rotationError words a step refused before anything was written.
func (f *rotateFlags) rotationError(re *publish.RotationError) error {
	const first = "publish the issuer first: ksa issuer render, then ksa issuer publish --to the same location"
	switch {
	case errors.Is(re, publish.ErrRingFile):
		return keyflags.RingFileError(f.ring, re.Err)
	case errors.Is(re, publish.ErrNoDiscovery) && re.Err != nil:
		return base.Fail(nil, first, "%s: %s (nothing was written)", re.What, ksa.ErrorText(re.Err))
	case errors.Is(re, publish.ErrNoDiscovery):
		return base.Fail(nil, first, "%s (nothing was written)", re.What)
	case errors.Is(re, publish.ErrKeySetUnreadable):
		return keySetReadError(re.Err)
	case errors.Is(re, publish.ErrKeySetUnusable):
		return base.Fail(nil, "find out what wrote it, then delete it and run the same ksa issuer rotate again: it publishes the key set the ring file publishes",
			"%s: %s (nothing was written)", re.What, ksa.ErrorText(re.Err))
	case errors.Is(re, publish.ErrUnknownKey):
		return base.Fail(nil, "add the key to the ring file (publicKeys, with publishInDiscovery) if it must stay published, or remove it from the store's key set yourself",
			"%s publishes key %s in %s, which the ring file never had: the ring and the store disagree (nothing was written)", f.to, base.TermSafe(re.KeyID), re.Object)
	case errors.Is(re, publish.ErrNoPublishedTime):
		return base.Fail(nil, "give "+entryName(re.Entries[0])+" a published time", "%s", re.What)
	case errors.Is(re, publish.ErrEarlySwitch):
		since := "its published time"
		if re.Restarted {
			since = "now, when this run publishes it"
		}
		return base.Fail(nil, fmt.Sprintf("move %s.primary to %s or later, or remove it and let ksa issuer rotate --to schedule the switch (do not mix it with ksa issuer rotate --ring-out)", entryName(re.Entries[0]), stamp(re.SafeAt)),
			"the ring file makes kid %s the signing key at %s, less than --propagation %s after %s (%s): relying parties could miss it (nothing was written)", base.TermSafe(re.KeyID), stamp(re.At), span(re.Propagation), since, stamp(re.Since))
	case errors.Is(re, rotation.ErrOneAtATime) && re.Old:
		return base.Fail(nil, "wait until the old key is retired (ksa issuer rotate --to retires it), then add the next key", "%s", re.What)
	case errors.Is(re, rotation.ErrOneAtATime):
		return base.Fail(nil, "keep one next key in the ring file and remove the others", "%s", re.What)
	case errors.Is(re, rotation.ErrNoSigner):
		return base.Fail(nil, "give a key of the ring file a primary time", "%s", re.What)
	}
	return base.Fail(re, "check the ring file and the store", "the scheduled rotation")
}

func entryName(i int) string { return fmt.Sprintf("keys[%d]", i) }

// keySetReadError is a key set, or a copy of it, the store could not
// serve: the run stops, since what the store publishes is unknown.
func keySetReadError(err error) error {
	what, cause, fix := "reading the store's key set", err, "check the store and its access"
	var pe *publish.Error
	if errors.As(err, &pe) {
		what, cause = pe.What, pe.Err
		if pe.Fix != "" {
			fix = flagWords.Replace(pe.Fix)
		}
	}
	return base.Fail(cause, fix+", then run the same ksa issuer rotate again", "%s (nothing was written)", what)
}

// ringStore is the ring file of --ring for the library: YAML or JSON,
// written in place, its errors in the command's words.
type ringStore struct {
	path string
	file *publish.FileRing
	// beforeWrite, when set (tests), runs before the first write.
	beforeWrite func()
}

// Read reads and parses the ring file.
func (r *ringStore) Read(ctx context.Context) (*extsigner.RingFile, publish.Version, error) {
	f, v, err := r.file.Read(ctx)
	var pe *publish.Error
	switch {
	case errors.As(err, &pe) && errors.Is(err, publish.ErrNotFound):
		return nil, "", base.Fail(nil, "check the --ring path", "ring file %s does not exist", r.path)
	case errors.As(err, &pe) && errors.Is(err, publish.ErrPermissionDenied):
		return nil, "", base.Fail(nil, "run as a user that can read it", "ring file %s is not readable", r.path)
	case errors.As(err, &pe):
		return nil, "", base.Fail(pe.Err, "check the --ring path: a ring file is a few kilobytes", "%s", pe.What)
	case err != nil:
		return nil, "", keyflags.RingFileError(r.path, err)
	}
	return f, v, nil
}

// Write writes the ring file in place, if unchanged since it was read.
func (r *ringStore) Write(ctx context.Context, f *extsigner.RingFile, v publish.Version) error {
	if r.beforeWrite != nil {
		r.beforeWrite()
	}
	err := r.file.Write(ctx, f, v)
	var pe *publish.Error
	switch {
	case errors.Is(err, publish.ErrChanged):
		return base.Fail(nil, "run one ksa issuer rotate at a time (a CronJob with concurrencyPolicy: Forbid), then run it again",
			"%s changed while this run read the store: another run or an edit wrote it (nothing was written)", r.path)
	case errors.As(err, &pe) && errors.Is(err, publish.ErrPermissionDenied):
		return base.Fail(pe.Err, "give --ring a file the run may write: a ring file mounted from a ConfigMap is read-only; rotate a writable copy and update the ConfigMap from it", "%s", pe.What)
	case errors.As(err, &pe):
		return base.Fail(pe.Err, "check --ring", "%s", pe.What)
	}
	return err
}

// hookedStore runs beforeWrite before each write (tests).
type hookedStore struct {
	publish.Store
	beforeWrite func()
}

func (s *hookedStore) Put(ctx context.Context, o publish.Object) error {
	s.beforeWrite()
	return s.Store.Put(ctx, o)
}

func (s *hookedStore) PutIf(ctx context.Context, o publish.Object, v publish.Version) error {
	s.beforeWrite()
	return s.Store.PutIf(ctx, o, v)
}
