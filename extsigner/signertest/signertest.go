package signertest

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"
	"k8s.io/externaljwt/apis/v1alpha1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Defaults of [Config] and the claims [Run] sends.
const (
	// DefaultIssuer is the iss of the claims Run asks the signer to sign
	// when Config.Issuer is empty.
	DefaultIssuer = "https://kubernetes.default.svc.cluster.local"
	// DefaultTimeout bounds each call when Config.Timeout is zero.
	DefaultTimeout = 10 * time.Second
	// Audience is the aud of the claims Run asks the signer to sign.
	Audience = "signertest"
	// Lifetime is the lifetime of those claims: ten minutes, the least
	// maximum kube-apiserver accepts from a signer.
	Lifetime = 10 * time.Minute
	// OversizedClaimsBytes is the length of the claims of the
	// CheckClaimsOversized request: four times what a token ksa accepts
	// holds (extsigner.MaxTokenBytes).
	OversizedClaimsBytes = 4 * extsigner.MaxTokenBytes
)

// The checks Run makes, by name.
const (
	// CheckMetadata (kubernetes): Metadata answers, with at least 600 s.
	CheckMetadata = "metadata"
	// CheckMetadataRange (strict): at most 2^32 s.
	CheckMetadataRange = "metadata/range"
	// CheckFetchKeys (kubernetes): FetchKeys answers with kube-apiserver's
	// rules (keys, timestamp, refresh hint).
	CheckFetchKeys = "fetchkeys"
	// CheckFetchKeysStrict (strict): and with the stricter ones (no key ID
	// twice, keys ksa and kube-apiserver can use, one in discovery).
	CheckFetchKeysStrict = "fetchkeys/strict"
	// CheckStableTimestamp (strict): a second FetchKeys with the same keys
	// carries the same data_timestamp (it says when the keys changed, and
	// kube-apiserver rebuilds its discovery documents when it moves).
	CheckStableTimestamp = "fetchkeys/stable-timestamp"
	// CheckSign (kubernetes): Sign answers Kubernetes-shaped claims with a
	// header kube-apiserver accepts ([CheckHeader]), a key not excluded
	// from discovery and a signature.
	CheckSign = "sign"
	// CheckHeaderStrict (strict): the header passes [CheckHeader].
	CheckHeaderStrict = "sign/header"
	// CheckKeyPublished (strict): the kid is among FetchKeys' keys and alg
	// fits its key.
	CheckKeyPublished = "sign/kid-published"
	// CheckSignature (strict): the signature is strict base64url and
	// verifies with the published key.
	CheckSignature = "sign/signature"
	// CheckToken (strict): the assembled token passes ksa's
	// tokens.Validator with the published keys.
	CheckToken = "sign/token"
	// The signer refuses bad claims with InvalidArgument (strict): empty;
	// padded base64url; the standard base64 alphabet; base64url of a JSON
	// array; OversizedClaimsBytes of claims (or ResourceExhausted); an exp
	// beyond the maximum lifetime Metadata gave (a key retired after that
	// lifetime would leave such tokens unverifiable).
	CheckClaimsEmpty     = "claims/empty"
	CheckClaimsPadded    = "claims/padded"
	CheckClaimsAlphabet  = "claims/standard-alphabet"
	CheckClaimsNotObject = "claims/not-object"
	CheckClaimsOversized = "claims/oversized"
	CheckClaimsLateExp   = "claims/exp-beyond-max"
)

// Config configures [Run].
type Config struct {
	// Address is the signer's socket: a path, or "@name" for an abstract
	// socket. Required.
	Address string
	// APIVersion is grpcserver.APIVersionV1 or
	// grpcserver.APIVersionV1Alpha1; empty means v1.
	APIVersion string
	// Issuer is the iss of the claims sent; empty means DefaultIssuer.
	Issuer string
	// Timeout bounds each call; zero means DefaultTimeout.
	Timeout time.Duration
	// Now is the clock the claims are issued and checked by; nil means
	// time.Now.
	Now func() time.Time
}

// Result is the outcome of one check.
type Result struct {
	Check string
	Level Level
	// Err is nil when the check passed, else a *Failure.
	Err error
	// Skipped says why the check was not made (an earlier one failed);
	// empty when it was.
	Skipped string
}

// Report is what [Run] found.
type Report struct {
	// Results are the checks in the order made.
	Results []Result
	// MaxTokenLifetime is what Metadata answered, if it was usable.
	MaxTokenLifetime time.Duration
	// KeySet holds the usable keys FetchKeys answered.
	KeySet extsigner.KeySet
	// Token is the token assembled from the Sign answer, if there was one.
	Token string
}

// Err returns every failure, each a *Failure, joined; nil when every check
// made passed.
func (r *Report) Err() error {
	var list []error
	for _, res := range r.Results {
		if res.Err != nil {
			list = append(list, res.Err)
		}
	}
	return errs.Join(prefix, "checks failed", list)
}

// Failed returns the checks of a level that failed.
func (r *Report) Failed(level Level) []string {
	var names []string
	for _, res := range r.Results {
		if res.Err != nil && res.Level == level {
			names = append(names, res.Check)
		}
	}
	return names
}

// String lists the results, one a line: PASS, FAIL or SKIP, the level, the
// check, and why.
func (r *Report) String() string {
	var b strings.Builder
	for _, res := range r.Results {
		switch {
		case res.Err != nil:
			fmt.Fprintf(&b, "FAIL %-10s %s: %s\n", res.Level, res.Check, errs.Text(errors.Unwrap(res.Err)))
		case res.Skipped != "":
			fmt.Fprintf(&b, "SKIP %-10s %s: %s\n", res.Level, res.Check, res.Skipped)
		default:
			fmt.Fprintf(&b, "PASS %-10s %s\n", res.Level, res.Check)
		}
	}
	return b.String()
}

func (r *Report) add(check string, level Level, err error) {
	if err != nil {
		err = &Failure{Check: check, Level: level, Err: err}
	}
	r.Results = append(r.Results, Result{Check: check, Level: level, Err: err})
}

func (r *Report) skip(check string, level Level, why string) {
	r.Results = append(r.Results, Result{Check: check, Level: level, Skipped: why})
}

// Run drives the signer at cfg.Address through every check and reports
// each: first kube-apiserver's own (LevelKubernetes), then the stricter
// ones (LevelStrict). The error is only for a config Run refuses (a
// *ksa.ConfigError); a signer that cannot be reached fails the checks.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Address == "" {
		return nil, &ksa.ConfigError{Field: "signertest.Config.Address", Reason: "is required"}
	}
	if cfg.Issuer == "" {
		cfg.Issuer = DefaultIssuer
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	conn, err := Dial(cfg.Address)
	if err != nil {
		return nil, &ksa.ConfigError{Field: "signertest.Config.Address", Reason: "cannot be dialled", Err: err}
	}
	defer conn.Close()
	var s signer
	switch cfg.APIVersion {
	case "", grpcserver.APIVersionV1:
		s = v1Client{c: externaljwtv1.NewExternalJWTSignerClient(conn)}
	case grpcserver.APIVersionV1Alpha1:
		s = v1alpha1Client{c: v1alpha1.NewExternalJWTSignerClient(conn)}
	default:
		return nil, &ksa.ConfigError{Field: "signertest.Config.APIVersion", Reason: fmt.Sprintf("%q is not v1 or v1alpha1", cfg.APIVersion)}
	}
	r := &Report{}
	run := &runner{cfg: cfg, s: s, r: r}
	run.metadata(ctx)
	keysOK := run.fetchKeys(ctx)
	run.sign(ctx, keysOK)
	run.badClaims(ctx)
	return r, nil
}

type runner struct {
	cfg Config
	s   signer
	r   *Report
}

// split sorts check errors (one refusal, or a list of them) into those
// kube-apiserver makes and the others.
func split(err error) (kube, strict error) {
	var list []error
	if l, ok := err.(*errs.List); ok {
		list = l.Errs
	} else if err != nil {
		list = []error{err}
	}
	var k, s []error
	for _, e := range list {
		if errors.Is(e, ErrKubernetes) {
			k = append(k, e)
		} else {
			s = append(s, e)
		}
	}
	return errs.Join("", "", k), errs.Join("", "", s)
}

func (run *runner) metadata(ctx context.Context) {
	secs, err := call(ctx, run.cfg.Timeout, run.s.metadata)
	if err != nil {
		run.r.add(CheckMetadata, LevelKubernetes, err)
		run.r.skip(CheckMetadataRange, LevelStrict, "no Metadata answer")
		return
	}
	lifetime, err := checkMetadata(secs)
	kube, strict := split(err)
	run.r.add(CheckMetadata, LevelKubernetes, kube)
	if kube != nil {
		run.r.skip(CheckMetadataRange, LevelStrict, "Metadata refused")
		return
	}
	run.r.add(CheckMetadataRange, LevelStrict, strict)
	run.r.MaxTokenLifetime = lifetime
}

// fetchKeys reports whether kube-apiserver would take the key set.
func (run *runner) fetchKeys(ctx context.Context) bool {
	raw, err := call(ctx, run.cfg.Timeout, run.s.fetchKeys)
	if err != nil {
		run.r.add(CheckFetchKeys, LevelKubernetes, err)
		run.r.skip(CheckFetchKeysStrict, LevelStrict, "no FetchKeys answer")
		run.r.skip(CheckStableTimestamp, LevelStrict, "no FetchKeys answer")
		return false
	}
	set, err := parseKeySet(raw)
	kube, strict := split(err)
	run.r.add(CheckFetchKeys, LevelKubernetes, kube)
	run.r.add(CheckFetchKeysStrict, LevelStrict, strict)
	run.r.KeySet = set

	again, err := call(ctx, run.cfg.Timeout, run.s.fetchKeys)
	switch {
	case err != nil:
		run.r.add(CheckStableTimestamp, LevelStrict, fmt.Errorf("a second FetchKeys failed: %w", err))
	case !sameKeys(raw, again):
		run.r.skip(CheckStableTimestamp, LevelStrict, "the keys changed between two calls")
	case !raw.DataTimestamp.Equal(again.DataTimestamp):
		run.r.add(CheckStableTimestamp, LevelStrict, fmt.Errorf("data_timestamp moved from %s to %s with the same keys",
			raw.DataTimestamp.Format(time.RFC3339Nano), again.DataTimestamp.Format(time.RFC3339Nano)))
	default:
		run.r.add(CheckStableTimestamp, LevelStrict, nil)
	}
	return kube == nil
}

// sameKeys reports whether two answers hold the same keys, in any order.
func sameKeys(a, b rawKeySet) bool {
	if len(a.Keys) != len(b.Keys) {
		return false
	}
	for _, k := range a.Keys {
		if !slices.ContainsFunc(b.Keys, func(o rawKey) bool {
			return o.KeyID == k.KeyID && o.ExcludeFromDiscovery == k.ExcludeFromDiscovery && bytes.Equal(o.DER, k.DER)
		}) {
			return false
		}
	}
	return true
}

// claims returns Kubernetes-shaped claims issued now for lifetime.
func (run *runner) claims(lifetime time.Duration) string {
	now := run.cfg.Now().Truncate(time.Second)
	c := &tokens.Claims{
		Issuer:    run.cfg.Issuer,
		Subject:   "system:serviceaccount:signertest:conformance",
		Audience:  []string{Audience},
		IssuedAt:  now,
		NotBefore: now,
		Expiry:    now.Add(lifetime),
		ID:        tokens.NewJTI(),
		Kubernetes: &tokens.KubernetesClaims{
			Namespace:      "signertest",
			ServiceAccount: ksa.ObjectRef{Name: "conformance", UID: tokens.NewJTI()},
		},
	}
	return base64.RawURLEncoding.EncodeToString(c.AppendJSON(nil))
}

func (run *runner) sign(ctx context.Context, keysOK bool) {
	strictChecks := []string{CheckHeaderStrict, CheckKeyPublished, CheckSignature, CheckToken}
	skipAll := func(why string) {
		for _, c := range strictChecks {
			run.r.skip(c, LevelStrict, why)
		}
	}
	claims := run.claims(Lifetime)
	type answer struct{ header, signature string }
	a, err := call(ctx, run.cfg.Timeout, func(ctx context.Context) (answer, error) {
		h, s, err := run.s.sign(ctx, claims)
		return answer{h, s}, err
	})
	if err != nil {
		run.r.add(CheckSign, LevelKubernetes, err)
		skipAll("no Sign answer")
		return
	}
	h, herr := CheckHeader(a.header)
	kube, strict := split(herr)
	if kube == nil && a.signature == "" {
		kube = refusal(true, "signature", "empty", nil)
	}
	var key jwks.Key
	var kerr error
	if herr == nil && keysOK {
		key, kerr = checkSigningKey(h, run.r.KeySet)
		if k, _ := split(kerr); k != nil && kube == nil {
			kube = k
		}
	}
	run.r.add(CheckSign, LevelKubernetes, kube)
	if kube != nil {
		skipAll("Sign answer refused")
		return
	}
	run.r.Token = a.header + "." + claims + "." + a.signature
	run.r.add(CheckHeaderStrict, LevelStrict, strict)
	switch {
	case herr != nil:
		for _, c := range strictChecks[1:] {
			run.r.skip(c, LevelStrict, "header unreadable")
		}
		return
	case !keysOK:
		for _, c := range strictChecks[1:] {
			run.r.skip(c, LevelStrict, "no usable key set")
		}
		return
	}
	run.r.add(CheckKeyPublished, LevelStrict, kerr)
	if kerr != nil {
		run.r.skip(CheckSignature, LevelStrict, "no published key to verify with")
		run.r.skip(CheckToken, LevelStrict, "no published key to verify with")
		return
	}
	run.r.add(CheckSignature, LevelStrict, checkSignature(h.Algorithm, key.Public, a.header, claims, a.signature))
	run.r.add(CheckToken, LevelStrict, run.validate(ctx, run.r.Token))
}

// validate checks a token with ksa's validator and the published keys.
func (run *runner) validate(ctx context.Context, token string) error {
	src, err := jwks.NewStaticSource(run.r.KeySet.Keys...)
	if err != nil {
		return err
	}
	v, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{run.cfg.Issuer}, Keys: src, Audiences: []string{Audience},
		SkipObjectCheck: true, Now: run.cfg.Now,
	})
	if err != nil {
		return err
	}
	_, err = v.Validate(ctx, token)
	return err
}

// badClaims sends claims a signer must refuse.
func (run *runner) badClaims(ctx context.Context) {
	// Good claims, but for the encoding: padded, or in the standard
	// alphabet (six '?' always make a '/').
	js, _ := base64.RawURLEncoding.DecodeString(run.claims(Lifetime))
	if len(js)%3 == 0 {
		js = append(js, ' ')
	}
	padded := base64.URLEncoding.EncodeToString(js)
	std := base64.RawStdEncoding.EncodeToString(append([]byte(`{"x":"??????",`), js[1:]...))
	notObject := base64.RawURLEncoding.EncodeToString([]byte(`[{"exp":1}]`))
	over := oversized(run.cfg.Now().Add(Lifetime))
	cases := []struct {
		check, claims string
		codes         []codes.Code
	}{
		{CheckClaimsEmpty, "", []codes.Code{codes.InvalidArgument}},
		{CheckClaimsPadded, padded, []codes.Code{codes.InvalidArgument}},
		{CheckClaimsAlphabet, std, []codes.Code{codes.InvalidArgument}},
		{CheckClaimsNotObject, notObject, []codes.Code{codes.InvalidArgument}},
		{CheckClaimsOversized, over, []codes.Code{codes.InvalidArgument, codes.ResourceExhausted}},
	}
	for _, c := range cases {
		run.r.add(c.check, LevelStrict, run.refused(ctx, c.claims, c.codes))
	}
	if run.r.MaxTokenLifetime == 0 {
		run.r.skip(CheckClaimsLateExp, LevelStrict, "no usable Metadata answer")
		return
	}
	run.r.add(CheckClaimsLateExp, LevelStrict, run.refused(ctx, run.claims(run.r.MaxTokenLifetime+time.Hour), []codes.Code{codes.InvalidArgument}))
}

// refused checks that Sign refuses claims with one of the codes.
func (run *runner) refused(ctx context.Context, claims string, want []codes.Code) error {
	_, err := call(ctx, run.cfg.Timeout, func(ctx context.Context) (string, error) {
		h, _, err := run.s.sign(ctx, claims)
		return h, err
	})
	if err == nil {
		return errors.New("signed")
	}
	if code := status.Code(err); !slices.Contains(want, code) {
		return fmt.Errorf("refused with %s, want %v: %w", code, want, err)
	}
	return nil
}

// oversized returns base64url claims of OversizedClaimsBytes: a JSON
// object with an exp and a long filler claim.
func oversized(exp time.Time) string {
	head := fmt.Sprintf(`{"exp":%d,"filler":"`, exp.Unix())
	n := OversizedClaimsBytes/4*3 - len(head) - 2
	return base64.RawURLEncoding.EncodeToString([]byte(head + strings.Repeat("a", n) + `"}`))
}
