package podcertctl

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ksa-go/ksa/podcert"
)

// Defaults of [Rotation].
const (
	// DefaultPropagation is how long before it signs the next CA must be
	// in the published trust bundle: the kubelet rewrites a pod's
	// projected ClusterTrustBundle on its sync period (a minute by
	// default), and a workload rereads its trust file on its own schedule;
	// an hour covers both with room for a kubelet that was down.
	DefaultPropagation = time.Hour
	// DefaultRotationSkew is added to the former CA's retirement, for
	// peers whose clocks are behind the signer's (kube-apiserver itself
	// accepts a notBefore up to five minutes off).
	DefaultRotationSkew = 5 * time.Minute
)

// Labels set on the published ClusterTrustBundle, after the SPIFFE
// canarying style: a workload selecting bundles by label
// (clusterTrustBundle's labelSelector) picks the live bundle of its trust
// domain.
const (
	// CanaryingLabel is always "live": the bundle holds every CA that
	// signs, or is about to, or signed a certificate still valid.
	CanaryingLabel = "ksa-go.github.io/canarying"
	// TrustDomainLabel is the signer's SPIFFE trust domain; left out when
	// the trust domain is longer than a label value may be (63
	// characters).
	TrustDomainLabel = "ksa-go.github.io/trust-domain"
)

// ErrNextCANotPublished: the next CA would sign sooner than
// Rotation.Propagation from now, and the published trust bundle does not
// hold it yet, so peers would refuse its certificates. [Controller.Run]
// returns it before deciding anything.
var ErrNextCANotPublished = errors.New("podcertctl: the next CA is not in the published trust bundle early enough")

// Rotation hands signing over from Config.Signer's CA (the current CA) to
// the next CA, without a certificate that any peer refuses:
//
//   - until SignsAt, the current CA signs; the trust bundle holds both CAs,
//     the current one first, so peers trust the next CA before any
//     certificate of it exists;
//   - from SignsAt, the next CA signs; the bundle still holds both, for the
//     current CA's certificates are valid until they expire;
//   - from SignsAt + Config.Signer's MaxLifetime + Skew (the retirement,
//     [Controller.RetireAt]), every certificate of the current CA has
//     expired, and the bundle holds the next CA alone.
//
// Every phase is a function of the clock and of the switch the published
// bundle records ([SwitchAtAnnotation]): a controller started again with
// the same Rotation, at any time, does what the first one would have done
// then, a postponed switch included. Once retired, the current CA can go: start the controller with the
// next CA as its Signer and no Rotation.
type Rotation struct {
	// Signer signs with the next CA. Its signer name and trust domain must
	// be Config.Signer's, and its CA another key.
	Signer *podcert.Signer
	// CAKey is the key Signer signs with, for [Controller.Ready] once it
	// signs. Nil: as Config.CAKey nil.
	CAKey crypto.Signer
	// SignsAt is when the next CA starts signing. Its certificate must be
	// valid from then until the retirement.
	SignsAt time.Time
	// Propagation is the least time between publishing the next CA and its
	// first signature. Run refuses to start when SignsAt is nearer than
	// that and the published bundle lacks the next CA
	// ([ErrNextCANotPublished]). Zero: [DefaultPropagation].
	Propagation time.Duration
	// Skew is added to the retirement. Zero: [DefaultRotationSkew].
	Skew time.Duration
}

// CA states of [CAState].
const (
	// CASigning: the CA signs the certificates issued now.
	CASigning = "signing"
	// CANext: the CA is published and signs from Rotation.SignsAt.
	CANext = "next"
	// CARetiring: the CA signs no more and stays published until its last
	// certificate has expired.
	CARetiring = "retiring"
)

// CAState is a CA the controller signs with or publishes, at a time.
type CAState struct {
	// Fingerprint is the hex SHA-256 digest of the CA's certificate (DER).
	Fingerprint string
	// Subject is the CA certificate's subject.
	Subject string
	// State is CASigning, CANext or CARetiring.
	State string
}

// rotation is a checked Rotation, with what it implies.
type rotation struct {
	Rotation
	maxLifetime time.Duration
	// switched: the next CA signs. Set once the published bundle was seen
	// to hold it at or after switchAt.
	switched atomic.Bool
	mu       sync.Mutex
	// switchAt and retireAt are SignsAt and its retirement, until a
	// bundle found without the next CA postpones them.
	switchAt, retireAt time.Time
}

// times returns when the next CA signs and when the current CA retires.
func (r *rotation) times() (switchAt, retireAt time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.switchAt, r.retireAt
}

// postpone moves the switch to at, and the retirement with it.
func (r *rotation) postpone(at time.Time) (switchAt, retireAt time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if at.After(r.switchAt) {
		r.switchAt, r.retireAt = at, at.Add(r.maxLifetime+r.Skew)
	}
	return r.switchAt, r.retireAt
}

// checkRotation checks a Rotation against the current signer.
func checkRotation(r *Rotation, current *podcert.Signer, noBundle bool) (*rotation, error) {
	next := r.Signer
	switch {
	case next == nil:
		return nil, configError("Next.Signer", "is nil")
	case noBundle:
		return nil, configError("Next", "needs the trust bundle published (NoTrustBundle false): peers learn the next CA from it")
	case next.SignerName() != current.SignerName():
		return nil, configError("Next.Signer", fmt.Sprintf("signs for %q, not %q", next.SignerName(), current.SignerName()))
	case next.TrustDomain() != current.TrustDomain():
		return nil, configError("Next.Signer", fmt.Sprintf("issues in trust domain %q, not %q", next.TrustDomain(), current.TrustDomain()))
	case sameKey(next.CA(), current.CA()):
		return nil, configError("Next.Signer", "has the current CA's key: a rotation needs a new key")
	case r.SignsAt.IsZero():
		return nil, configError("Next.SignsAt", "is zero")
	case r.Propagation < 0:
		return nil, configError("Next.Propagation", "is negative")
	case r.Skew < 0:
		return nil, configError("Next.Skew", "is negative")
	}
	rot := &rotation{Rotation: *r, maxLifetime: current.MaxLifetime()}
	if rot.Propagation == 0 {
		rot.Propagation = DefaultPropagation
	}
	if rot.Skew == 0 {
		rot.Skew = DefaultRotationSkew
	}
	rot.switchAt, rot.retireAt = rot.SignsAt, rot.SignsAt.Add(current.MaxLifetime()+rot.Skew)
	ca := next.CA()
	for _, u := range ca.URIs {
		// A SPIFFE CA names its trust domain: peers of the current one
		// would refuse a certificate of another.
		if u.Scheme == "spiffe" && u.Host != current.TrustDomain() {
			return nil, configError("Next.Signer", fmt.Sprintf("has a CA of SPIFFE trust domain %q, not %q", u.Host, current.TrustDomain()))
		}
	}
	switch {
	case ca.NotBefore.After(rot.SignsAt):
		return nil, configError("Next.Signer", fmt.Sprintf("has a CA valid from %s, after it is to sign (%s)",
			ca.NotBefore.UTC().Format(time.RFC3339), rot.SignsAt.UTC().Format(time.RFC3339)))
	case ca.NotAfter.Before(rot.retireAt):
		return nil, configError("Next.Signer", fmt.Sprintf("has a CA that expires at %s, before the current CA retires (%s)",
			ca.NotAfter.UTC().Format(time.RFC3339), rot.retireAt.UTC().Format(time.RFC3339)))
	}
	return rot, nil
}

func sameKey(a, b *x509.Certificate) bool {
	pub, ok := a.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(b.PublicKey)
}

// fingerprint is the hex SHA-256 digest of a certificate.
func fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return hex.EncodeToString(sum[:])
}

// RetireAt returns when the current CA leaves the trust bundle:
// Rotation.SignsAt + Config.Signer's MaxLifetime + Rotation.Skew, or later
// when the switch was postponed; the zero time without a Rotation.
func (c *Controller) RetireAt() time.Time {
	if c.rot == nil {
		return time.Time{}
	}
	_, retireAt := c.rot.times()
	return retireAt
}

// SwitchAt returns when the next CA signs: Rotation.SignsAt, or later
// when a published bundle found without the next CA postponed it (here or
// before a restart, as the bundle records); the zero time without a
// Rotation.
func (c *Controller) SwitchAt() time.Time {
	if c.rot == nil {
		return time.Time{}
	}
	switchAt, _ := c.rot.times()
	return switchAt
}

// signer returns the signer and CA key that sign now.
func (c *Controller) signer() (*podcert.Signer, crypto.Signer) {
	if c.rot != nil && c.rot.switched.Load() {
		return c.rot.Signer, c.rot.CAKey
	}
	return c.cfg.Signer, c.cfg.CAKey
}

// bundleAt returns the certificates published at t: the current CA's
// trust bundle, then the next CA's, each certificate once; the next CA's
// alone from the retirement.
func (c *Controller) bundleAt(t time.Time) string {
	if c.rot == nil {
		return string(c.cfg.Signer.TrustBundle())
	}
	if _, retireAt := c.rot.times(); !t.Before(retireAt) {
		return string(c.rot.Signer.TrustBundle())
	}
	return string(joinPEM(c.cfg.Signer.TrustBundle(), c.rot.Signer.TrustBundle()))
}

// joinPEM concatenates PEM certificate lists, dropping repeated
// certificates.
func joinPEM(lists ...[]byte) []byte {
	var out []byte
	var seen [][]byte
	for _, l := range lists {
		for rest := l; ; {
			var b *pem.Block
			b, rest = pem.Decode(rest)
			if b == nil {
				break
			}
			dup := false
			for _, s := range seen {
				dup = dup || bytes.Equal(s, b.Bytes)
			}
			if !dup {
				seen = append(seen, b.Bytes)
				out = append(out, pem.EncodeToMemory(b)...)
			}
		}
	}
	return out
}

// labels are the labels of the published bundle.
func (c *Controller) labels() map[string]string {
	l := map[string]string{CanaryingLabel: "live"}
	if td := c.cfg.Signer.TrustDomain(); len(validation.IsValidLabelValue(td)) == 0 {
		l[TrustDomainLabel] = td
	}
	return l
}

// CAs returns the CAs the controller signs with or publishes now, the
// signing one first.
func (c *Controller) CAs() []CAState {
	state := func(s *podcert.Signer, st string) CAState {
		return CAState{Fingerprint: fingerprint(s.CA()), Subject: s.CA().Subject.String(), State: st}
	}
	if c.rot == nil {
		return []CAState{state(c.cfg.Signer, CASigning)}
	}
	_, retireAt := c.rot.times()
	switch {
	case !c.rot.switched.Load():
		return []CAState{state(c.cfg.Signer, CASigning), state(c.rot.Signer, CANext)}
	case c.cfg.Now().Before(retireAt):
		return []CAState{state(c.rot.Signer, CASigning), state(c.cfg.Signer, CARetiring)}
	}
	return []CAState{state(c.rot.Signer, CASigning)}
}

// checkPublished reads the published bundle at the start of a rotation:
// it keeps a later switch the bundle records for the same next CA
// ([SwitchAtAnnotation]), and refuses to start a rotation whose next CA
// signs sooner than Propagation from now unless the published bundle holds
// it already (a controller started again mid-rotation). Past the
// retirement too: a start then publishes the next CA alone, which only a
// bundle holding the next CA already (both CAs, or the next alone after
// the retirement) makes safe; else SignsAt is a mistake (a wrong year) and
// every live certificate of the current CA would fail. The refusal goes by
// SignsAt, not by a recorded switch: a record never makes a start safe.
func (c *Controller) checkPublished(ctx context.Context, api versionAPI, now time.Time) error {
	r := c.rot
	if r == nil {
		return nil
	}
	have, annotations, err := api.published(ctx, c.cfg.Client, c.cfg.TrustBundleName)
	if err != nil {
		return fmt.Errorf("podcertctl: reading ClusterTrustBundle %s: %w", c.cfg.TrustBundleName, err)
	}
	c.recall(annotations)
	if !now.Add(r.Propagation).After(r.SignsAt) || holds(have, r.Signer.TrustBundle()) {
		return nil
	}
	return fmt.Errorf("%w: it signs at %s, less than %s from now, and ClusterTrustBundle %s does not hold it",
		ErrNextCANotPublished, r.SignsAt.UTC().Format(time.RFC3339), r.Propagation, c.cfg.TrustBundleName)
}

// holds reports whether the PEM bundle have holds every certificate of
// want.
func holds(have string, want []byte) bool {
	return bytes.Equal(joinPEM([]byte(have), want), joinPEM([]byte(have)))
}

// othersKept returns the CA certificates of the published bundle have
// that mine lacks and that are valid at now, as PEM, with their
// fingerprints.
func othersKept(have string, mine []byte, now time.Time) ([]byte, []string) {
	var out []byte
	var fps []string
	for rest := []byte(have); ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return out, fps
		}
		one := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})
		if b.Type != "CERTIFICATE" || holds(string(mine), one) {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil || !cert.IsCA || now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
			continue
		}
		out = append(out, one...)
		fps = append(fps, fingerprint(cert))
	}
}

// publish writes the bundle of now, logging and observing a write. A
// controller without a rotation keeps the valid CAs of the published
// bundle it does not sign with, after its own (another replica's next CA
// of a rotation, a former CA whose certificates are alive): dropping a CA
// whose certificates are valid breaks handshakes, so only a rotation's
// retirement, or deleting the ClusterTrustBundle, drops a CA.
func (c *Controller) publish(ctx context.Context, api versionAPI, version string, now time.Time) error {
	bundle := c.bundleAt(now)
	if c.rot == nil {
		have, _, err := api.published(ctx, c.cfg.Client, c.cfg.TrustBundleName)
		if err != nil {
			return fmt.Errorf("podcertctl: reading ClusterTrustBundle %s: %w", c.cfg.TrustBundleName, err)
		}
		if kept, fps := othersKept(have, []byte(bundle), now); len(kept) > 0 {
			c.log.Warn("the published trust bundle holds valid CAs this controller does not sign with; keeping them",
				"trustBundle", c.cfg.TrustBundleName, "kept", fps,
				"hint", "run every replica with the same --ca-* and --next-ca-* flags; delete the ClusterTrustBundle to drop a CA at once")
			bundle += string(kept)
		}
	}
	written, err := api.publish(ctx, c.cfg.Client, c.cfg.TrustBundleName, c.cfg.Signer.SignerName(), bundle, c.ours(now))
	if err != nil {
		return fmt.Errorf("podcertctl: publishing ClusterTrustBundle %s: %w", c.cfg.TrustBundleName, err)
	}
	if written {
		c.log.Info("trust bundle written", "trustBundle", c.cfg.TrustBundleName, "version", version)
		c.observe(Event{Kind: TrustBundleWritten})
	} else {
		c.log.Info("trust bundle up to date", "trustBundle", c.cfg.TrustBundleName, "version", version)
	}
	return nil
}

// rotate makes the rotation's changes at their times: the next CA signs,
// then the current CA leaves the trust bundle (tried again until written).
// Until the retirement it reads the published bundle again before the
// switch and every Config.Resync, and publishes it again when another
// writer (a replica without the rotation, a rollback) left a CA out; a
// bundle found without the next CA before the switch postpones the switch
// to Propagation after it was published again. It returns when the
// retirement is done or ctx ends. Run published the bundle of its start
// already.
func (c *Controller) rotate(ctx context.Context, api versionAPI, version string) {
	r := c.rot
	if r == nil {
		return
	}
	wait := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-c.cfg.After(d):
			return true
		}
	}
	retry := RetryDelay
	for {
		now := c.cfg.Now()
		_, retireAt := r.times()
		if !now.Before(retireAt) {
			if err := c.publish(ctx, api, version, now); err != nil {
				// Logged only: Errored events count status writes.
				c.log.Error("retiring the former CA from the trust bundle; trying again", "err", err, "in", retry)
				if !wait(retry) {
					return
				}
				retry = min(2*retry, MaxRetryDelay)
				continue
			}
			c.log.Info("the former CA is retired from the trust bundle", "ca", fingerprint(c.cfg.Signer.CA()))
			c.observe(Event{Kind: CARetired})
			return
		}
		if err := c.keepPublished(ctx, api, version, now); err != nil {
			// Fail closed: the switch waits for a bundle seen to hold the
			// next CA.
			c.log.Error("checking the published trust bundle; trying again", "err", err, "in", retry)
			if !wait(retry) {
				return
			}
			retry = min(2*retry, MaxRetryDelay)
			continue
		}
		retry = RetryDelay
		switchAt, retireAt := r.times()
		if !r.switched.Load() && !now.Before(switchAt) {
			r.switched.Store(true)
			c.log.Info("the next CA signs from now", "ca", fingerprint(r.Signer.CA()), "retiring", fingerprint(c.cfg.Signer.CA()),
				"retireAt", retireAt.UTC().Format(time.RFC3339))
			c.observe(Event{Kind: CASwitched})
			continue
		}
		at := retireAt
		if !r.switched.Load() {
			at = switchAt
		}
		if !wait(min(at.Sub(now), c.cfg.Resync)) {
			return
		}
	}
}

// keepPublished reads the published bundle, keeps a later switch it
// records, and, when it lacks a CA of the bundle of now or the record of
// the switch, publishes that again; a next CA missing before the switch
// postpones the switch to Propagation from now, recorded in the bundle
// published again.
func (c *Controller) keepPublished(ctx context.Context, api versionAPI, version string, now time.Time) error {
	r := c.rot
	have, annotations, err := api.published(ctx, c.cfg.Client, c.cfg.TrustBundleName)
	if err != nil {
		return fmt.Errorf("podcertctl: reading ClusterTrustBundle %s: %w", c.cfg.TrustBundleName, err)
	}
	c.recall(annotations)
	complete := holds(have, []byte(c.bundleAt(now)))
	if complete && c.recorded(annotations) {
		return nil
	}
	nextMissing := !holds(have, r.Signer.TrustBundle())
	postponing := nextMissing && !r.switched.Load()
	if postponing {
		// Before publishing, so the bundle records the postponed switch.
		r.postpone(now.Add(r.Propagation))
	}
	if err := c.publish(ctx, api, version, now); err != nil {
		return err
	}
	const hint = "another writer changed it: run every replica with the same --next-ca-* flags"
	switch {
	case complete:
		c.log.Info("the published trust bundle lacked the record of the switch; recorded it again",
			"trustBundle", c.cfg.TrustBundleName, "ca", fingerprint(r.Signer.CA()))
	case postponing:
		switchAt, retireAt := r.times()
		c.log.Warn("the published trust bundle lacked the next CA; published it again and postponed the switch",
			"trustBundle", c.cfg.TrustBundleName, "ca", fingerprint(r.Signer.CA()), "signsAt", switchAt.UTC().Format(time.RFC3339),
			"retireAt", retireAt.UTC().Format(time.RFC3339), "hint", hint)
		c.warnExpiry()
		c.observe(Event{Kind: CASwitchPostponed})
	case nextMissing:
		c.log.Error("the published trust bundle lacked the next CA, which signs already; published it again",
			"trustBundle", c.cfg.TrustBundleName, "ca", fingerprint(r.Signer.CA()), "hint", hint)
	default:
		c.log.Warn("the published trust bundle lacked the current CA; published it again",
			"trustBundle", c.cfg.TrustBundleName, "ca", fingerprint(c.cfg.Signer.CA()), "hint", hint)
	}
	return nil
}
