package issuercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
)

// ringRotation is what "ksa issuer rotate --ring" prints.
type ringRotation struct {
	NextKey  KeygenResult `json:"next_key"`
	RingFile string       `json:"ring_file"`
	Plan     []ringStep   `json:"plan"`
}

// ringStep is one step the signers take by themselves, at its time.
type ringStep struct {
	At     time.Time `json:"at"`
	Action string    `json:"action"`
	KeyID  string    `json:"kid"`
}

// runRing rotates the ring file of ksa signer serve: the next key is
// generated and added with the times of every step.
func (f *rotateFlags) runRing(a *base.App, cmd *cobra.Command) error {
	if err := f.checkRingFlags(cmd); err != nil {
		return err
	}
	if base.SamePath(f.ringOut, f.ring) {
		// Rotated in place: not while a scheduled rotation (or another
		// run) rewrites the same file.
		unlock, err := lockRing(a, f.ring)
		if err != nil {
			return err
		}
		defer unlock()
	}
	data, err := base.ReadInput(f.ring, nil, extsigner.MaxRingFileBytes)
	if err != nil {
		return keyflags.RingFileReadError(f.ring, err)
	}
	ring, err := keyflags.ParseRingFile(data)
	if err != nil {
		return keyflags.RingFileError(f.ring, err)
	}
	if err := f.nextSpec(a, cmd, ring); err != nil {
		return err
	}
	nextPath, err := filepath.Abs(f.next)
	if err != nil {
		return base.Fail(err, "give another --next-key", "--next-key %s", f.next)
	}
	now := a.Now().UTC().Truncate(time.Second)
	published := now.Add(f.publishDelay)
	next, err := ring.Rotate(extsigner.RotateOptions{Key: nextPath, Published: published, Primary: published.Add(f.propagation), Now: now})
	if err != nil {
		fix := "give a --propagation of at least the ring's minStaging"
		if errors.Is(err, extsigner.ErrRotationUnderWay) {
			fix = "run ksa issuer rotate --ring again once the next key signs"
		}
		return base.Fail(nil, fix, "%s cannot be rotated: %s", f.ring, base.OneLine(ksa.ErrorText(err)))
	}
	key, err := f.writeRing(a, next, data)
	if err != nil {
		return err
	}
	res := f.ringPlan(cmd.Context(), a, ring, next, key)
	return base.PrintData(a.Stdout, f.format, res, func(w io.Writer) { f.printRing(w, res, now) })
}

// writeRing makes the next key and writes it, its public key and the
// ring file next (data is the ring file read, whose format it keeps).
func (f *rotateFlags) writeRing(a *base.App, next *extsigner.RingFile, data []byte) (jwks.Key, error) {
	out, err := keyflags.RingFileBytes(next, data)
	if err != nil {
		return jwks.Key{}, err
	}
	s, err := f.spec.Generate()
	if err != nil {
		return jwks.Key{}, err
	}
	key, err := jwks.NewKey(s)
	if err != nil {
		return jwks.Key{}, base.Fail(err, base.BugFix, "the generated key")
	}
	priv, pub, err := keyflags.EncodePair(s)
	if err != nil {
		return jwks.Key{}, base.Fail(err, base.BugFix, "encoding the key")
	}
	nextPub := keyflags.PublicPath(f.next)
	replace := base.ReplaceNothing
	if base.SamePath(f.ringOut, f.ring) {
		replace = base.ReplaceForced // the ring file just read: rotated in place
	}
	const keyFix = "choose another --next-key, or remove the old file yourself if it is truly unused (keys are never overwritten)"
	if err := a.WriteOutputs(
		base.Output{Path: f.next, Data: priv, Perm: 0o600, Flag: "--next-key", ExistsFix: keyFix},
		base.Output{Path: nextPub, Data: pub, Perm: 0o644, Flag: "--next-key", ExistsFix: keyFix},
		base.Output{Path: f.ringOut, Data: out, Perm: 0o644, Flag: "--ring-out", Replace: replace,
			ExistsFix: "choose another --ring-out, or --ring-out " + f.ring + " to rotate it in place"},
	); err != nil {
		return jwks.Key{}, err
	}
	return key, nil
}

// checkRingFlags refuses what does not go with --ring (without --to).
func (f *rotateFlags) checkRingFlags(cmd *cobra.Command) error {
	for _, fl := range []string{"issuer", "signing-key", "out", "key", "jwks-uri", "max-token-lifetime"} {
		if cmd.Flags().Changed(fl) {
			return base.Usage("drop --"+fl+": the ring file holds the keys and their lifetime, and kube-apiserver serves the documents", "--%s does not go with --ring", fl)
		}
	}
	if f.ringOut == "" {
		return base.Usage("give --ring-out FILE (--ring itself to rotate in place)", "--ring needs --ring-out")
	}
	if f.publishDelay < 0 || f.propagation <= 0 {
		return base.Usage("give --publish-delay of zero or more and a positive --propagation", "--publish-delay %v or --propagation %v is out of range", f.publishDelay, f.propagation)
	}
	return nil
}

// ringPlan is what the signers do by themselves with the ring file next,
// rotated from ring: the next key published, then signing, and the keys
// the rotation retired.
func (f *rotateFlags) ringPlan(ctx context.Context, a *base.App, ring, next *extsigner.RingFile, key jwks.Key) *ringRotation {
	res := &ringRotation{
		NextKey:  KeygenResult{PrivateKeyFile: f.next, PublicKeyFile: keyflags.PublicPath(f.next), Key: keyInfo{KeyID: key.KeyID, Algorithm: key.Algorithm, Type: keyflags.KeyType(key.Public)}},
		RingFile: f.ringOut,
	}
	newKey := next.Keys[len(next.Keys)-1]
	res.Plan = append(res.Plan,
		ringStep{At: newKey.Published, Action: "the next key is published", KeyID: key.KeyID},
		ringStep{At: newKey.Primary, Action: "the next key signs; the key before it stays published", KeyID: key.KeyID})
	for _, k := range next.Keys[:len(next.Keys)-1] {
		if retiredNow(ring, k) {
			res.Plan = append(res.Plan, ringStep{At: k.Retired, Action: "the key before it is retired: every token it signed has expired", KeyID: kidOfEntry(ctx, a, k)})
		}
	}
	return res
}

// printRing writes a rotation of the ring file as text.
func (f *rotateFlags) printRing(w io.Writer, res *ringRotation, now time.Time) {
	k := res.NextKey
	fmt.Fprintf(w, "wrote %s and %s: the next key, %s, %s, kid %s\n", k.PrivateKeyFile, k.PublicKeyFile, k.Key.Type, k.Key.Algorithm, k.Key.KeyID)
	fmt.Fprintf(w, "wrote %s: the signers follow it by themselves (ksa signer serve --ring reads it again within its --ring-check-interval)\n\n", f.ringOut)
	for i, st := range res.Plan {
		kid := st.KeyID
		if kid == "" {
			kid = "?"
		}
		fmt.Fprintf(w, "%d. %s (%s): %s (kid %s)\n", i+1, st.At.Format(time.RFC3339), base.RelTime(st.At, now), st.Action, kid)
	}
}

// nextSpec settles the next key's type: the flags', or like the key that
// signs last in the ring file (opened to read its public key).
func (f *rotateFlags) nextSpec(a *base.App, cmd *cobra.Command, ring *extsigner.RingFile) error {
	last := -1
	for i, k := range ring.Keys {
		if k.Key != "" && !k.Primary.IsZero() && (last < 0 || k.Primary.After(ring.Keys[last].Primary)) {
			last = i
		}
	}
	if last < 0 && !cmd.Flags().Changed("type") {
		return base.Fail(nil, "give a key in the ring file a primary time", "%s names no key that signs", f.ring)
	}
	current := ""
	if last >= 0 {
		current = ring.Keys[last].Key
	}
	return f.nextSpecLike(a, cmd, current)
}

// nextSpecLike settles the next key's type: the flags', or like current,
// the reference of the key that signs (opened to read its public key).
func (f *rotateFlags) nextSpecLike(a *base.App, cmd *cobra.Command, ref string) error {
	var cur keyflags.Spec
	if !cmd.Flags().Changed("type") {
		current, err := keyflags.OpenSigner(cmd.Context(), a.KeyOpener(), ref, "--ring")
		if err != nil {
			return err
		}
		cur = keyflags.SpecOf(current)
	}
	return f.settleSpec(cmd, cur)
}

// retiredNow reports whether the rotation gave k, an entry of the next
// ring file, its retirement: it had none in the ring file rotated.
func retiredNow(ring *extsigner.RingFile, k extsigner.RingFileKey) bool {
	for _, o := range ring.Keys {
		if o.Key == k.Key && o.PublicKeys == k.PublicKeys {
			return o.Retired.IsZero() && !k.Retired.IsZero()
		}
	}
	return false
}

// kidOfEntry is the key ID of a ring file's entry, for the plan: its kid,
// or the key's (empty when the key cannot be opened here).
func kidOfEntry(ctx context.Context, a *base.App, k extsigner.RingFileKey) string {
	if k.KeyID != "" {
		return k.KeyID
	}
	s, err := a.KeyOpener().Open(ctx, k.Key)
	if err != nil {
		return ""
	}
	kid, _ := jwks.KeyID(s.Public())
	return kid
}
