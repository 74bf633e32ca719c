package podcertctl

import (
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/rotation"
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

// ErrNextCANotPublished: the next CA would sign sooner than
// Rotation.Propagation from now, and the published trust bundle does not
// hold it yet, so peers would refuse its certificates. [Controller.Run]
// returns it before deciding anything.
var ErrNextCANotPublished = errs.New(prefix, "the next CA is not in the published trust bundle early enough")

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
// It is a schedule of package rotation: two CAs, keyed by the
// fingerprints of their certificates, the current one signing from the
// start and retired at SignsAt + MaxLifetime + Skew, the next one
// published from the start and signing at SignsAt, under the policy
// Propagation, MaxLifetime, Skew. The ClusterTrustBundle is the one copy
// of the published set that Schedule.Next checks.
//
// Every phase is a function of the clock and of the switch the published
// bundle records ([SwitchAtAnnotation]): a controller started again with
// the same Rotation, at any time, does what the first one would have done
// then, a postponed switch included. Once retired, the current CA can go:
// start the controller with the next CA as its Signer and no Rotation.
type Rotation struct {
	// Signer signs with the next CA. Its signer name and trust domain must
	// be Config.Signer's, and its CA another key.
	Signer *podcert.Signer
	// CAKey is the key Signer signs with, for [Controller.Ready] once it
	// signs. Nil: as Config.CAKey nil.
	CAKey crypto.Signer
	// SignsAt is when the next CA starts signing, from 1970 to the year
	// 9999. Its certificate must be valid from then until the retirement.
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

// caRotation is a checked Rotation: its schedule, and what the controller
// saw.
type caRotation struct {
	Rotation
	// cur is the current CA's signer; curID and nextID the CAs' keys in
	// the schedule (their fingerprints).
	cur           *podcert.Signer
	curID, nextID string
	// sched is the schedule: replaced, never changed, as a recorded or a
	// postponed switch moves it later.
	sched atomic.Pointer[rotation.Schedule]
	// switched: the next CA signs. Set once the published bundle was seen
	// to hold it at or after the schedule's switch.
	switched atomic.Bool
	// retired: the bundle this replica writes was seen without the
	// current CA from the retirement on (CARetired observed).
	retired atomic.Bool
}

// schedule returns the rotation's schedule now.
func (r *caRotation) schedule() *rotation.Schedule { return r.sched.Load() }

// times returns when the next CA signs and when the current CA retires,
// as the schedule writes them.
func (r *caRotation) times() (switchAt, retireAt time.Time) {
	for _, k := range r.schedule().Keys() {
		switch k.ID {
		case r.nextID:
			switchAt = k.Signs
		case r.curID:
			retireAt = k.Retired
		}
	}
	return switchAt, retireAt
}

// signerOf returns the signer of the CA with key id in the schedule.
func (r *caRotation) signerOf(id string) *podcert.Signer {
	if id == r.curID {
		return r.cur
	}
	return r.Signer
}

// held returns the rotation's CAs the PEM bundle have holds (each CA's
// trust bundle whole): the copy Schedule.Next compares with the schedule.
func (r *caRotation) held(have string) []string {
	ids := []string{}
	for _, id := range []string{r.curID, r.nextID} {
		if holds(have, r.signerOf(id).TrustBundle()) {
			ids = append(ids, id)
		}
	}
	return ids
}

// next returns the rotation's action at now, given the published bundle
// have: the one copy, and the zero cadence (the schedule moves by itself).
func (r *caRotation) next(have string, now time.Time) (rotation.Action, error) {
	a, err := r.schedule().Next([][]string{r.held(have)}, now, rotation.Cadence{})
	if err != nil {
		return a, wrap(err, "the CA rotation at %s", now.UTC().Format(time.RFC3339))
	}
	return a, nil
}

// checkRotation checks a Rotation against the current signer and builds
// its schedule.
func checkRotation(r *Rotation, current *podcert.Signer, noBundle bool) (*caRotation, error) {
	if err := checkNext(r, current, noBundle); err != nil {
		return nil, err
	}
	rot := &caRotation{Rotation: *r, cur: current, curID: fingerprint(current.CA()), nextID: fingerprint(r.Signer.CA())}
	if rot.Propagation == 0 {
		rot.Propagation = DefaultPropagation
	}
	if rot.Skew == 0 {
		rot.Skew = DefaultRotationSkew
	}
	p := rotation.Policy{Propagation: rot.Propagation, MaxLifetime: current.MaxLifetime(), Skew: rot.Skew}
	sched, err := rotation.New(p, []rotation.Key{
		{ID: rot.curID, Signs: time.Unix(0, 0), Retired: r.SignsAt.Add(p.RetireWait())},
		{ID: rot.nextID, Signs: r.SignsAt},
	})
	var ce *ksa.ConfigError
	switch {
	case errors.As(err, &ce): // the policy: Propagation or Skew over rotation.MaxDuration
		return nil, configError("Next."+strings.TrimPrefix(ce.Field, "rotation.Policy."), ce.Reason)
	case err != nil:
		return nil, &ksa.ConfigError{Field: "podcertctl.Config.Next.SignsAt",
			Reason: fmt.Sprintf("%s cannot be scheduled", r.SignsAt.UTC().Format(time.RFC3339)), Err: err}
	}
	rot.sched.Store(sched)
	ca := r.Signer.CA()
	_, retireAt := rot.times()
	switch {
	case ca.NotBefore.After(r.SignsAt):
		return nil, configError("Next.Signer", fmt.Sprintf("has a CA valid from %s, after it is to sign (%s)",
			ca.NotBefore.UTC().Format(time.RFC3339), r.SignsAt.UTC().Format(time.RFC3339)))
	case ca.NotAfter.Before(retireAt):
		return nil, configError("Next.Signer", fmt.Sprintf("has a CA that expires at %s, before the current CA retires (%s)",
			ca.NotAfter.UTC().Format(time.RFC3339), retireAt.UTC().Format(time.RFC3339)))
	}
	return rot, nil
}

// checkNext checks the next CA's signer against the current one, and the
// rotation's settings.
func checkNext(r *Rotation, current *podcert.Signer, noBundle bool) error {
	next := r.Signer
	switch {
	case next == nil:
		return configError("Next.Signer", "is nil")
	case noBundle:
		return configError("Next", "needs the trust bundle published (NoTrustBundle false): peers learn the next CA from it")
	case next.SignerName() != current.SignerName():
		return configError("Next.Signer", fmt.Sprintf("signs for %q, not %q", next.SignerName(), current.SignerName()))
	case next.TrustDomain() != current.TrustDomain():
		return configError("Next.Signer", fmt.Sprintf("issues in trust domain %q, not %q", next.TrustDomain(), current.TrustDomain()))
	case sameKey(next.CA(), current.CA()):
		return configError("Next.Signer", "has the current CA's key: a rotation needs a new key")
	case r.SignsAt.IsZero():
		return configError("Next.SignsAt", "is zero")
	case r.Propagation < 0:
		return configError("Next.Propagation", "is negative")
	case r.Skew < 0:
		return configError("Next.Skew", "is negative")
	}
	for _, u := range next.CA().URIs {
		// A SPIFFE CA names its trust domain: peers of the current one
		// would refuse a certificate of another.
		if u.Scheme == "spiffe" && u.Host != current.TrustDomain() {
			return configError("Next.Signer", fmt.Sprintf("has a CA of SPIFFE trust domain %q, not %q", u.Host, current.TrustDomain()))
		}
	}
	return nil
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

// bundleAt returns the certificates published at t: the trust bundle of
// each CA the schedule lists then (both, the current one first, until the
// retirement; the next one alone from then), each certificate once.
func (c *Controller) bundleAt(t time.Time) string {
	if c.rot == nil {
		return string(c.cfg.Signer.TrustBundle())
	}
	var lists [][]byte
	for _, id := range c.rot.schedule().At(t).Listed() {
		lists = append(lists, c.rot.signerOf(id).TrustBundle())
	}
	return string(joinPEM(lists...))
}

// caStates names the schedule's roles as CAs' states.
var caStates = map[rotation.Role]string{rotation.RoleSigning: CASigning, rotation.RoleStaged: CANext, rotation.RolePrevious: CARetiring}

// CAs returns the CAs the controller signs with or publishes now, the
// signing one first.
func (c *Controller) CAs() []CAState {
	state := func(s *podcert.Signer, st string) CAState {
		return CAState{Fingerprint: fingerprint(s.CA()), Subject: s.CA().Subject.String(), State: st}
	}
	r := c.rot
	if r == nil {
		return []CAState{state(c.cfg.Signer, CASigning)}
	}
	var out []CAState
	for _, k := range r.schedule().At(c.cfg.Now()).Keys {
		st := caStates[k.Role]
		if !r.switched.Load() {
			// The schedule's switch is made once the bundle is seen to
			// hold the next CA: until then the current CA signs.
			st = CASigning
			if k.ID == r.nextID {
				st = CANext
			}
		}
		if s := state(r.signerOf(k.ID), st); st == CASigning {
			out = append([]CAState{s}, out...)
		} else {
			out = append(out, s)
		}
	}
	return out
}
