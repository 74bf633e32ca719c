package issuercmd

import (
	"crypto"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

// rotationStep is one step of a key rotation plan.
type rotationStep struct {
	// At is the earliest time the step is safe.
	At     time.Time `json:"at"`
	Action string    `json:"action"`
	// Signs is the kid of the key that signs after the step.
	Signs string `json:"signs"`
	// Published are the kids of the key set after the step.
	Published          []string `json:"published"`
	KubeAPIServerFlags []string `json:"kube_apiserver_flags,omitempty"`
	// SignerCommand restarts the external signer, when a key is in a key
	// store.
	SignerCommand string `json:"signer_command,omitempty"`
	Command       string `json:"command,omitempty"`
}

type rotateResult struct {
	NextKey  KeygenResult   `json:"next_key"`
	Render   *renderResult  `json:"render"`
	Plan     []rotationStep `json:"plan"`
	Notes    []string       `json:"notes,omitempty"`
	Duration string         `json:"duration"`
}

// rotateFlags are the settings of "ksa issuer rotate".
type rotateFlags struct {
	issuer, jwksURI, out, signing, next string
	keys                                []string
	spec                                keyflags.Spec
	propagation, lifetime               time.Duration
	format                              base.Format
	// ring mode: the ring file rotated, where the next one goes, and how
	// long every signer has to read it before the next key is published.
	ring, ringOut string
	publishDelay  time.Duration
	// insecureNow lets the hidden --now apply to a scheduled rotation's
	// writes (tests compress its hours with it).
	insecureNow bool
	// scheduled mode: the store the issuer is published at, the key age
	// that starts a rotation, and whether to print the plan only.
	to     string
	every  time.Duration
	dryRun bool
	// rotateRead, when set (tests), is called once a run that writes has
	// read the ring file and the store, holding its lock.
	rotateRead func()
}

// rotateHelp is the long help of its command.
const rotateHelp = `Start a key rotation without breaking a live token:

 1. now: the next key is generated (like the current one unless --type,
    --bits or --curve say otherwise) and published beside the current key:
    the documents in DIR are re-rendered; upload them. kube-apiserver gets
    the next key's public file as one more --service-account-key-file.
 2. after --propagation (how long relying parties may keep the old key set;
    Kubernetes sends max-age one hour, clouds refresh within a day): the next
    key signs (--service-account-signing-key-file); the old key stays
    published, since tokens it signed are still in use.
 3. after the longest token lifetime more (--max-token-lifetime, plus a
    minute of clock skew): the old key is withdrawn, with the command given.

Nothing is deleted or overwritten; each step is a command to run at its time.

With --ring, for ksa signer serve: the next key is generated and added to
the ring file, written to --ring-out (which may be --ring itself: only a
ring file is ever replaced there) with the times of every step, which the
signers follow by themselves: published after --publish-delay (time for
every signer to read the new file; they read it every 10s by default),
signing --propagation later (at least the ring's minStaging), and the key
signing before it retired once every token it signed has expired (the
ring's maxTokenLifetime and two minutes). Keys retired by now are dropped
from the file; rotated in place, the file is locked as a scheduled
rotation locks it (below). kube-apiserver serves the discovery documents
from the signer's keys; for an issuer hosted elsewhere, render them with ksa issuer
render once the next key is published.

With --ring and --to, the published location (as for ksa issuer publish),
one step of a scheduled rotation, for a CronJob to run as often as it
likes: each run reads the ring file and the key set the store publishes,
and changes at most one stage, once its wait is over; before that it prints
what it waits for and until when, and exits 0.

 1. steady, the signing key signed for --every: the next key is created
    (--next-key, whose {date} becomes the run's time as YYYYMMDDhhmmss, so
    that one CronJob line makes a fresh file or key-store key each time: a
    valid PKCS #11 hex id too), added to
    the ring file published and not signing, then published to --to.
 2. --propagation after it was published (at least the max-age of 1h the
    store serves the key set with): the ring file makes it the signing key
    from --publish-delay later (default 1m), the time every signer takes to
    read the new ring file.
 3. once every token the old key signed has expired (the ring's
    maxTokenLifetime, clock skew and leeway after the switch): the old key
    is retired in the ring file, then withdrawn from --to.

Every signer must read the same ring file, the one this command rewrites,
within --publish-delay: a shared volume the signers poll (every 10s by
default), or a file the run's own pipeline distributes (a ConfigMap
updated from it reaches the pods in a minute or more: give --publish-delay
that long). A ConfigMap mounted read-only cannot be --ring itself. Do not
mix this mode with --ring --ring-out on the same ring file: a switch time
the ring file already holds must come --propagation after the store got
the key, or the run refuses.

A run first repairs what an interrupted run left: a key the ring file
publishes and a copy of the key set in the store lacks (the key set, and
jwks.json beside it when the store has one) is published (the next key's
wait starts again), a key the ring file retired is withdrawn. The ring
file is rewritten in place, atomically (through a symbolic link, keeping
its mode); the issuer's discovery document is kept as published. --dry-run
prints the stage and the plan and writes nothing; --now TIME (a global
flag, RFC 3339) gives it another clock. A run that writes refuses --now
unless --insecure-now, for tests only, says so. A store that publishes a
key the ring file never had, or whose key set cannot be read, is refused
before anything is written. A run that writes holds a lock from start to
end, an flock(2) of FILE.lock beside the ring file (the ring file itself
is replaced by a rename; FILE.lock stays, empty between runs): a run
started meanwhile fails at once, naming the run that holds it, and writes
nothing. Each write to the store is conditional on what the run read
there (If-Match on Azure and S3, ifGenerationMatch on GCS, a lock and a
digest in a directory): a change another writer made meanwhile is never
overwritten, and the run fails. A CronJob with concurrencyPolicy: Forbid
starts one run at a time. With -o json, "action" names the run's change (repair,
publish-next, sign-next or retire-old), empty while it waits.

With a key in a key store (--signing-key or --next-key a pkcs11:, awskms:,
cloudkms: or azurekms: URI; see ksa issuer keygen), kube-apiserver signs
through "ksa signer serve": each step restarts the signer with the keys it
signs with and publishes, in place of kube-apiserver's key flags.`

func newRotateCmd(a *base.App, rotateRead func()) *cobra.Command {
	f := &rotateFlags{rotateRead: rotateRead}
	cmd := &cobra.Command{
		Use:   "rotate (--issuer URL --signing-key CURRENT --out DIR | --ring FILE --ring-out FILE | --ring FILE --to URL) --next-key FILE",
		Short: "Generate the next signing key, publish it beside the current one, and print the overlap plan",
		Long:  rotateHelp,
		Example: `  ksa issuer rotate --issuer https://oidc.example.com/cluster-1 \
      --signing-key sa.key --next-key sa-2.key --out site
  # tokens live at most 24h (--service-account-max-token-expiration=24h):
  ksa issuer rotate --issuer https://oidc.example.com/cluster-1 --signing-key sa.key \
      --next-key sa-2.key --out site --max-token-lifetime 24h -o json
  ksa issuer rotate --issuer https://oidc.example.com/cluster-1 --out site \
      --signing-key 'pkcs11:module-path=/usr/lib/softhsm/libsofthsm2.so;token=ksa;id=0a01;object=sa-2026?pin-source=/run/secrets/hsm-pin' \
      --next-key 'pkcs11:module-path=/usr/lib/softhsm/libsofthsm2.so;token=ksa;id=0a02;object=sa-2027?pin-source=/run/secrets/hsm-pin'
  # the signers' ring file, rotated in place:
  ksa issuer rotate --ring /etc/ksa/ring.yaml --ring-out /etc/ksa/ring.yaml --next-key /etc/ksa/sa-2.key
  # one step of a scheduled rotation (a CronJob runs it daily), its plan only:
  ksa issuer rotate --ring ring.yaml --to www/cluster-1 --next-key 'sa-{date}.key' --every 2160h --dry-run`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.issuer, "issuer", "", "issuer URL (required without --ring)")
	fl.StringVar(&f.signing, "signing-key", "", "the current signing key: a PEM file or a key-store URI (required without --ring)")
	fl.StringVar(&f.next, "next-key", "", "private key file, or key-store URI, to create for the next key (required; never overwritten)")
	fl.StringArrayVar(&f.keys, "key", nil, "other key files to keep published (repeatable)")
	fl.StringVar(&f.jwksURI, "jwks-uri", "", "where the key set is hosted (default: issuer + /openid/v1/jwks)")
	fl.StringVar(&f.out, "out", "", "directory to re-render the documents into (required without --ring)")
	fl.StringVar(&f.ring, "ring", "", "the ring file of ksa signer serve to rotate (YAML or JSON), in place of --issuer, --signing-key and --out")
	fl.StringVar(&f.ringOut, "ring-out", "", "where the next ring file goes (with --ring; may be --ring itself)")
	fl.DurationVar(&f.publishDelay, "publish-delay", time.Minute, "with --ring: how long after now the next key is published (with --to: signs), for every signer to read the new ring file first")
	fl.StringVar(&f.spec.Type, "type", "", "next key type: rsa or ecdsa (default: the current key's)")
	fl.IntVar(&f.spec.Bits, "bits", 0, "RSA modulus size of the next key (default: the current key's, or 2048 with --type rsa)")
	fl.StringVar(&f.spec.Curve, "curve", "", "ECDSA curve of the next key (default: the current key's, or P-256 with --type ecdsa)")
	fl.DurationVar(&f.propagation, "propagation", 24*time.Hour, "how long relying parties may cache the old key set (the next key signs that long after it is published)")
	fl.DurationVar(&f.lifetime, "max-token-lifetime", 24*time.Hour, "the longest lifetime of a token the old key signed (kube-apiserver's --service-account-max-token-expiration)")
	fl.StringVar(&f.to, "to", "", "with --ring: the store the issuer is published at (as for ksa issuer publish): one scheduled rotation step, for a CronJob")
	fl.DurationVar(&f.every, "every", defaultEvery, "with --to: how long a key signs before the next rotation starts (at least the whole rotation)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "with --to: print the stage and the plan; write nothing")
	fl.BoolVar(&f.insecureNow, "insecure-now", false, "with --to: INSECURE, for tests only: let --now TIME (the global flag giving the clock) apply to a run that writes; a clock ahead of the real one withdraws keys whose tokens are live")
	base.AddOutputFlag(cmd, &f.format)
	base.Required(cmd, "next-key")
	return cmd
}

func (f *rotateFlags) run(a *base.App, cmd *cobra.Command) error {
	if f.to != "" {
		return f.runScheduled(a, cmd)
	}
	for _, fl := range []string{"every", "dry-run", "insecure-now"} {
		if cmd.Flags().Changed(fl) {
			return base.Usage("give --to URL and --ring FILE for a scheduled rotation, or drop --"+fl, "--%s goes with --to", fl)
		}
	}
	if f.ring != "" {
		return f.runRing(a, cmd)
	}
	return f.runManual(a, cmd)
}

// runManual starts a rotation by hand: the next key beside the current
// one, the documents re-rendered, and the plan of the steps to run.
func (f *rotateFlags) runManual(a *base.App, cmd *cobra.Command) error {
	if err := f.checkManualFlags(cmd); err != nil {
		return err
	}
	current, err := keyflags.LoadSigner(a, cmd.Context(), f.signing, "--signing-key")
	if err != nil {
		return err
	}
	if err := keyflags.ForAPIServer(f.signing, current.Public()); err != nil {
		return err
	}
	if err := f.settleSpec(cmd, keyflags.SpecOf(current)); err != nil {
		return err
	}
	if err := f.checkRenders(a, current); err != nil {
		return err
	}
	next, nextKey, err := f.makeNextKey(a, cmd)
	if err != nil {
		return err
	}
	setup, err := loadSetup(a, f.issuer, f.jwksURI, append([]string{next}, f.keys...), f.signing)
	if err != nil {
		return err
	}
	res, err := setup.render(a, f.out)
	if err != nil {
		return err
	}
	curKID, _ := jwks.KeyID(current)
	result := f.manualPlan(a.Now().UTC().Truncate(time.Second), res, curKID, next, nextKey)
	if setup.inStore() {
		f.signerPlan(&result, next)
	}
	return base.PrintData(a.Stdout, f.format, result, func(w io.Writer) { f.printManual(w, &result, next, a.Now().UTC().Truncate(time.Second)) })
}

// checkManualFlags refuses a rotation by hand without the flags it needs,
// or with --ring-out.
func (f *rotateFlags) checkManualFlags(cmd *cobra.Command) error {
	var missing, flags []string
	for _, fl := range []string{"issuer", "signing-key", "out"} {
		if !cmd.Flags().Changed(fl) {
			missing, flags = append(missing, fl), append(flags, "--"+fl)
		}
	}
	if len(missing) > 0 {
		return base.Usage(fmt.Sprintf("give %s, or --ring for ksa signer serve's ring file (see '%s --help')", base.JoinWords(flags, "and"), cmd.CommandPath()),
			`required flag(s) "%s" not set`, strings.Join(missing, `", "`))
	}
	if f.ringOut != "" {
		return base.Usage("drop --ring-out, or give --ring", "--ring-out goes with --ring")
	}
	if cmd.Flags().Changed("type") {
		return f.spec.CheckFlags(cmd)
	}
	return nil
}

// settleSpec settles the next key's type: the flags', or like cur (the
// key that signs) unless --bits or --curve say otherwise.
func (f *rotateFlags) settleSpec(cmd *cobra.Command, cur keyflags.Spec) error {
	if !cmd.Flags().Changed("type") {
		f.spec.Type = cur.Type
		if !cmd.Flags().Changed("bits") {
			f.spec.Bits = cur.Bits
		}
		if !cmd.Flags().Changed("curve") {
			f.spec.Curve = cur.Curve
		}
	}
	if err := f.spec.CheckFlags(cmd); err != nil {
		return err
	}
	if f.spec.Bits == 0 {
		f.spec.Bits = 2048
	}
	if f.spec.Curve == "" {
		f.spec.Curve = "P-256"
	}
	return nil
}

// checkRenders checks that everything but the new key renders before the
// key is written, so that a refused flag leaves nothing behind.
func (f *rotateFlags) checkRenders(a *base.App, current crypto.Signer) error {
	if err := base.CheckIssuerURL(f.issuer); err != nil {
		return err
	}
	if _, err := loadSetup(a, f.issuer, f.jwksURI, f.keys, f.signing); err != nil {
		return err
	}
	uri := f.jwksURI
	if uri == "" {
		uri = oidc.JWKSURL(f.issuer)
	}
	curKey, err := jwks.NewKey(current)
	if err != nil {
		return keyflags.FileError(f.signing, err)
	}
	if _, err := oidc.Render(oidc.IssuerConfig{Issuer: f.issuer, JWKSURI: uri}, []jwks.Key{curKey}); err != nil {
		return issuerError(err)
	}
	return checkRenderDir(a, f.out)
}

// makeNextKey makes the next key at --next-key and returns what names it
// for kube-apiserver or the signer (its public key file, or its
// reference in the key store), and its JWK.
func (f *rotateFlags) makeNextKey(a *base.App, cmd *cobra.Command) (string, jwks.Key, error) {
	nextRef, err := keyflags.ParseRef(f.next, "--next-key", true)
	if err != nil {
		return "", jwks.Key{}, err
	}
	var next string
	var nextPublic crypto.PublicKey
	if nextRef.Scheme() == keystore.SchemeFile {
		s, err := f.spec.Generate()
		if err != nil {
			return "", jwks.Key{}, err
		}
		next = keyflags.PublicPath(f.next)
		if err := keyflags.WritePair(a, s, f.next, next, "--next-key", "--next-key"); err != nil {
			return "", jwks.Key{}, err
		}
		nextPublic = s.Public()
	} else {
		created, err := keyflags.CreateInStore(a, cmd.Context(), nextRef, f.spec, "--next-key", "")
		if err != nil {
			return "", jwks.Key{}, err
		}
		f.next, next, nextPublic = created.Ref, created.Ref, created.Public
	}
	nextKey, err := jwks.NewKey(nextPublic)
	if err != nil {
		return "", jwks.Key{}, base.Fail(err, base.BugFix, "the generated key")
	}
	return next, nextKey, nil
}

// manualPlan is the plan of a rotation by hand, for kube-apiserver's key
// files: publish now, switch after --propagation, withdraw the old key
// once its tokens have expired.
func (f *rotateFlags) manualPlan(now time.Time, res *renderResult, curKID, next string, nextKey jwks.Key) rotateResult {
	published := kids(res.Keys)
	withoutOld := slices.DeleteFunc(slices.Clone(published), func(k string) bool { return k == curKID })
	switchAt := now.Add(f.propagation)
	retireAt := switchAt.Add(f.lifetime + tokens.DefaultLeeway)
	signing := func(key string, files ...string) []string {
		fl := []string{"--service-account-signing-key-file=" + key}
		for _, p := range append(files, f.keys...) {
			fl = append(fl, "--service-account-key-file="+p)
		}
		return fl
	}
	// Step 3 renders the next key (which signs) and the other keys kept,
	// without the old one.
	retire := []string{"ksa", "issuer", "render", "--issuer", f.issuer}
	if f.jwksURI != "" {
		retire = append(retire, "--jwks-uri", f.jwksURI)
	}
	for _, k := range append([]string{f.next}, f.keys...) {
		retire = append(retire, "--key", k)
	}
	retire = append(retire, "--out", f.out)
	return rotateResult{
		NextKey: KeygenResult{PrivateKeyFile: f.next, PublicKeyFile: next,
			Key: keyInfo{KeyID: nextKey.KeyID, Algorithm: nextKey.Algorithm, Type: keyflags.KeyType(nextKey.Public)}},
		Render:   res,
		Duration: base.Secs(int64(retireAt.Sub(now) / time.Second)),
		Plan: []rotationStep{
			{At: now, Action: "publish the next key: upload " + f.out + "; add its public key to kube-apiserver and restart it",
				Signs: curKID, Published: published, KubeAPIServerFlags: signing(f.signing, f.signing, next)},
			{At: switchAt, Action: "switch signing to the next key: restart kube-apiserver with these flags (the old key stays published)",
				Signs: nextKey.KeyID, Published: published, KubeAPIServerFlags: signing(f.next, next, f.signing)},
			{At: retireAt, Action: "withdraw the old key: every token it signed has expired; re-render, upload, and restart kube-apiserver with these flags",
				Signs: nextKey.KeyID, Published: withoutOld, KubeAPIServerFlags: signing(f.next, next), Command: base.CommandLine(retire...)},
		},
		Notes: []string{
			"kube-api-access tokens (extended to a year, with warnafter) are replaced by the kubelet within about an hour of the switch; withdrawing the old key ends the rest",
			"keep " + f.signing + " until step 3, then delete it yourself",
		},
	}
}

// signerPlan turns the plan for a key in a key store: kube-apiserver
// cannot read one, so each step restarts the signer it signs through.
func (f *rotateFlags) signerPlan(result *rotateResult, next string) {
	result.NextKey.PrivateKeyFile, result.NextKey.PublicKeyFile, result.NextKey.KeyRef = "", "", next
	steps := []struct{ action, signer string }{
		{"publish the next key: upload " + f.out + "; restart the signer with the next key published", signerCommand(f.signing, append([]string{next}, f.keys...)...)},
		{"switch signing to the next key: restart the signer with it signing (the old key stays published)", signerCommand(next, append([]string{f.signing}, f.keys...)...)},
		{"withdraw the old key: every token it signed has expired; re-render, upload, and restart the signer without it", signerCommand(next, f.keys...)},
	}
	for i, st := range steps {
		result.Plan[i].Action, result.Plan[i].SignerCommand, result.Plan[i].KubeAPIServerFlags = st.action, st.signer, nil
	}
	result.Notes[1] = "keep " + f.signing + " until step 3, then remove it yourself"
}

// printManual writes a rotation by hand as text.
func (f *rotateFlags) printManual(w io.Writer, result *rotateResult, next string, now time.Time) {
	k := result.NextKey.Key
	if result.NextKey.KeyRef != "" {
		fmt.Fprintf(w, "created the next key in the key store, %s, %s, kid %s:\n  %s\n\n", k.Type, k.Algorithm, k.KeyID, next)
	} else {
		fmt.Fprintf(w, "wrote %s and %s: the next key, %s, %s, kid %s\n\n", f.next, next, k.Type, k.Algorithm, k.KeyID)
	}
	printRender(w, result.Render)
	fmt.Fprintf(w, "\nrotation plan (%s in all):\n", result.Duration)
	for i, st := range result.Plan {
		fmt.Fprintf(w, "\n%d. %s (%s)\n   %s\n   signs: %s\n   published: %s\n", i+1, st.At.Format(time.RFC3339), base.RelTime(st.At, now), st.Action, st.Signs, strings.Join(st.Published, ", "))
		for _, fl := range st.KubeAPIServerFlags {
			fmt.Fprintf(w, "   %s\n", fl)
		}
		if st.SignerCommand != "" {
			fmt.Fprintf(w, "   signer: %s\n", st.SignerCommand)
		}
		if st.Command != "" {
			fmt.Fprintf(w, "   run: %s\n", st.Command)
		}
	}
	fmt.Fprintln(w)
	for _, n := range result.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func kids(keys []keyInfo) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.KeyID
	}
	return out
}
