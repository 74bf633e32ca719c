package podcertctl_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// timer is a settable clock whose After fires when the clock is moved past
// its deadline; each After sends its duration on waiting, so a test moves
// the clock only once the controller waits.
type timer struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	waiting chan time.Duration
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func newTimer(t time.Time) *timer { return &timer{now: t, waiting: make(chan time.Duration, 16)} }

func (c *timer) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *timer) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	ch := make(chan time.Time, 1)
	c.waiters = append(c.waiters, waiter{at: c.now.Add(d), ch: ch})
	c.mu.Unlock()
	c.waiting <- d
	return ch
}

// set moves the clock to t, firing the waiters due.
func (c *timer) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(t) {
			kept = append(kept, w)
			continue
		}
		w.ch <- t
	}
	c.waiters = kept
}

// wait returns the duration of the next After call.
func (c *timer) wait(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.waiting:
		return d
	case <-time.After(30 * time.Second):
		t.Fatal("the controller does not wait")
		return 0
	}
}

// rotationCA is a self-signed CA and a signer of it on clock.
type rotationCA struct {
	cert   *x509.Certificate
	key    crypto.Signer
	signer *podcert.Signer
}

func newRotationCA(t *testing.T, name string, clock func() time.Time, notBefore time.Time, mod func(*podcert.SignerConfig)) rotationCA {
	t.Helper()
	return newRotationCAUntil(t, name, clock, notBefore, t0.Add(365*24*time.Hour), mod)
}

// newRotationCAUntil is newRotationCA of a CA valid until notAfter.
func newRotationCAUntil(t *testing.T, name string, clock func() time.Time, notBefore, notAfter time.Time, mod func(*podcert.SignerConfig)) rotationCA {
	t.Helper()
	key := newCAKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	cfg := podcert.SignerConfig{SignerName: signerName, Key: key, Chain: []*x509.Certificate{cert}, Now: clock}
	if mod != nil {
		mod(&cfg)
	}
	s, err := podcert.NewSigner(cfg)
	require.NoError(t, err)
	return rotationCA{cert: cert, key: key, signer: s}
}

func pemOf(cas ...rotationCA) string {
	var b bytes.Buffer
	for _, ca := range cas {
		b.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}))
	}
	return b.String()
}

const bundleName = "example.com:pods:primary-bundle"

func bundleOf(t *testing.T, cs *fake.Clientset) *certificatesv1.ClusterTrustBundle {
	t.Helper()
	b, err := cs.CertificatesV1().ClusterTrustBundles().Get(context.Background(), bundleName, metav1.GetOptions{})
	require.NoError(t, err)
	return b
}

// issue creates a request and returns the leaf issued for it.
func issue(t *testing.T, cs *fake.Clientset, events <-chan podcertctl.Event, name string) *x509.Certificate {
	t.Helper()
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Spec: spec(t, signerName, "")}
	_, err := cs.CertificatesV1().PodCertificateRequests("shop").Create(context.Background(), pcr, metav1.CreateOptions{})
	require.NoError(t, err)
	e := next(t, events)
	for e.Name != name || e.Kind == podcertctl.Skipped {
		e = next(t, events)
	}
	require.Equal(t, podcertctl.Decided, e.Kind, "%v", e.Err)
	require.Equal(t, podcert.Issued, e.Decision.Outcome)
	return e.Decision.Leaf
}

// rotationEvent waits for the next event of no request, passing over
// the requests skipped (decided already, seen again after their write).
func rotationEvent(t *testing.T, events <-chan podcertctl.Event) podcertctl.EventKind {
	t.Helper()
	for {
		if e := nextEvent(t, events); e.Kind != podcertctl.Skipped {
			return e.Kind
		}
	}
}

// states returns the CAs' states by subject.
func states(ctl *podcertctl.Controller) map[string]string {
	out := map[string]string{}
	for _, s := range ctl.CAs() {
		out[s.Subject] = s.State
	}
	return out
}

// TestControllerRotatesCA goes through every phase by the clock: both CAs
// published (current first, labelled) before the next one signs, the next
// CA signing from SignsAt with both still published, the former CA
// dropped at SignsAt + MaxLifetime + skew.
func TestControllerRotatesCA(t *testing.T) {
	clock := newTimer(t0)
	cur := newRotationCA(t, "CA 1", clock.Now, t0.Add(-time.Hour), nil)
	nxt := newRotationCA(t, "CA 2", clock.Now, t0.Add(-time.Hour), nil)
	signsAt := t0.Add(2 * time.Hour)
	retireAt := signsAt.Add(podcert.DefaultMaxLifetime + podcertctl.DefaultRotationSkew)
	cs := fake.NewClientset()
	ctl, events := run(t, cs, podcertctl.Config{Signer: cur.signer, CAKey: cur.key, APIVersion: podcertctl.V1,
		Next: &podcertctl.Rotation{Signer: nxt.signer, CAKey: nxt.key, SignsAt: signsAt},
		// A resync longer than the rotation: the waits are for its phases.
		Resync: 1000 * time.Hour, Now: clock.Now, After: clock.After})
	assert.Equal(t, retireAt, ctl.RetireAt())
	require.Equal(t, podcertctl.TrustBundleWritten, nextEvent(t, events).Kind)
	b := bundleOf(t, cs)
	assert.Equal(t, pemOf(cur, nxt), b.Spec.TrustBundle, "both CAs, the current first")
	assert.Equal(t, map[string]string{podcertctl.CanaryingLabel: "live", podcertctl.TrustDomainLabel: "cluster.local"}, b.Labels)
	assert.Equal(t, map[string]string{"CN=CA 1": podcertctl.CASigning, "CN=CA 2": podcertctl.CANext}, states(ctl))

	assert.Equal(t, 2*time.Hour, clock.wait(t), "waits for SignsAt")
	require.NoError(t, issue(t, cs, events, "req-1").CheckSignatureFrom(cur.cert), "the current CA signs before SignsAt")

	clock.set(signsAt)
	require.Equal(t, podcertctl.CASwitched, rotationEvent(t, events))
	assert.Equal(t, retireAt.Sub(signsAt), clock.wait(t), "waits for the retirement")
	require.NoError(t, issue(t, cs, events, "req-2").CheckSignatureFrom(nxt.cert), "the next CA signs from SignsAt")
	assert.Equal(t, pemOf(cur, nxt), bundleOf(t, cs).Spec.TrustBundle, "the former CA stays while its certificates are valid")
	assert.Equal(t, map[string]string{"CN=CA 2": podcertctl.CASigning, "CN=CA 1": podcertctl.CARetiring}, states(ctl))
	require.NoError(t, ctl.Ready(context.Background()), "ready through the overlap")

	clock.set(retireAt.Add(-time.Second))
	clock.set(retireAt)
	require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events))
	require.Equal(t, podcertctl.CARetired, rotationEvent(t, events))
	assert.Equal(t, pemOf(nxt), bundleOf(t, cs).Spec.TrustBundle, "the next CA alone")
	assert.Equal(t, map[string]string{"CN=CA 2": podcertctl.CASigning}, states(ctl))
}

// TestControllerRestartsMidRotation: a controller started again with the
// same rotation does what the first would do at that time, from the
// bundle it published.
func TestControllerRestartsMidRotation(t *testing.T) {
	signsAt := t0.Add(2 * time.Hour)
	retireAt := signsAt.Add(podcert.DefaultMaxLifetime + podcertctl.DefaultRotationSkew)
	clock := newTimer(t0)
	cur := newRotationCA(t, "CA 1", clock.Now, t0.Add(-time.Hour), nil)
	nxt := newRotationCA(t, "CA 2", clock.Now, t0.Add(-time.Hour), nil)
	labels := map[string]string{podcertctl.CanaryingLabel: "live", podcertctl.TrustDomainLabel: "cluster.local"}
	published := func(cas ...rotationCA) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: bundleName, Labels: labels},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: pemOf(cas...)}}
	}
	cfg := func() podcertctl.Config {
		return podcertctl.Config{Signer: cur.signer, CAKey: cur.key, APIVersion: podcertctl.V1,
			Next: &podcertctl.Rotation{Signer: nxt.signer, CAKey: nxt.key, SignsAt: signsAt}, Resync: 1000 * time.Hour, Now: clock.Now, After: clock.After}
	}
	for _, tc := range []struct {
		name   string
		at     time.Time
		have   *certificatesv1.ClusterTrustBundle
		want   string
		signer rotationCA
		wait   time.Duration // the next After; zero: none
	}{
		{name: "before SignsAt, published", at: signsAt.Add(-time.Minute), have: published(cur, nxt), want: pemOf(cur, nxt), signer: cur, wait: time.Minute},
		{name: "in the overlap", at: signsAt.Add(time.Hour), have: published(cur, nxt), want: pemOf(cur, nxt), signer: nxt, wait: retireAt.Sub(signsAt.Add(time.Hour))},
		{name: "after the retirement", at: retireAt.Add(time.Hour), have: published(cur, nxt), want: pemOf(nxt), signer: nxt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock.set(tc.at)
			cs := fake.NewClientset(tc.have)
			_, events := run(t, cs, cfg())
			if tc.wait != 0 {
				assert.Equal(t, tc.wait, clock.wait(t))
			}
			require.NoError(t, issue(t, cs, events, "req-1").CheckSignatureFrom(tc.signer.cert))
			assert.Equal(t, tc.want, bundleOf(t, cs).Spec.TrustBundle)
		})
	}
}

// TestControllerRefusesUnpublishedNextCA: a next CA that signs within the
// propagation time is refused unless the published bundle holds it.
func TestControllerRefusesUnpublishedNextCA(t *testing.T) {
	clock := newTimer(t0)
	cur := newRotationCA(t, "CA 1", clock.Now, t0.Add(-time.Hour), nil)
	nxt := newRotationCA(t, "CA 2", clock.Now, t0.Add(-72*time.Hour), nil)
	for _, tc := range []struct {
		name    string
		signsAt time.Time
		have    string
		wantErr bool
	}{
		{name: "an hour ahead", signsAt: t0.Add(time.Hour)},
		{name: "within the hour, not published", signsAt: t0.Add(59 * time.Minute), wantErr: true},
		{name: "past, not published", signsAt: t0.Add(-time.Hour), have: pemOf(cur), wantErr: true},
		{name: "past, published", signsAt: t0.Add(-time.Hour), have: pemOf(cur, nxt)},
		// A signs-at past the retirement (a year typo) must not publish
		// the next CA alone: every live certificate of the current CA
		// would fail.
		{name: "past the retirement, nothing published", signsAt: t0.Add(-48 * time.Hour), wantErr: true},
		{name: "past the retirement, the current CA alone", signsAt: t0.Add(-48 * time.Hour), have: pemOf(cur), wantErr: true},
		{name: "past the retirement, both", signsAt: t0.Add(-48 * time.Hour), have: pemOf(cur, nxt)},
		{name: "past the retirement, the next CA alone", signsAt: t0.Add(-48 * time.Hour), have: pemOf(nxt)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			if tc.have != "" {
				cs = fake.NewClientset(&certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: bundleName},
					Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: tc.have}})
			}
			ctl, err := podcertctl.New(podcertctl.Config{Client: fakeClient(t, cs), Signer: cur.signer, APIVersion: podcertctl.V1,
				Next: &podcertctl.Rotation{Signer: nxt.signer, SignsAt: tc.signsAt}, Now: clock.Now, After: clock.After,
				Log: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // Run checks and publishes, then stops
			err = ctl.Run(ctx)
			if !tc.wantErr {
				require.NoError(t, err)
				assert.Contains(t, bundleOf(t, cs).Spec.TrustBundle, pemOf(nxt))
				return
			}
			require.ErrorIs(t, err, podcertctl.ErrNextCANotPublished)
			assert.Regexp(t, `^podcertctl: the next CA is not in the published trust bundle early enough: it signs at \S+, less than 1h0m0s from now, and ClusterTrustBundle `+bundleName+` does not hold it$`, err.Error())
			_, err = cs.CertificatesV1().ClusterTrustBundles().Get(context.Background(), bundleName, metav1.GetOptions{})
			if tc.have == "" {
				require.Error(t, err, "nothing published")
			}
		})
	}
}

func TestNewValidatesRotation(t *testing.T) {
	cs := fakeClient(t, fake.NewClientset())
	now := func() time.Time { return t0 }
	cur := newRotationCA(t, "CA 1", now, t0.Add(-time.Hour), nil)
	nxt := newRotationCA(t, "CA 2", now, t0.Add(-time.Hour), nil)
	otherName := newRotationCA(t, "CA 3", now, t0.Add(-time.Hour), func(c *podcert.SignerConfig) { c.SignerName = "example.com/other" })
	otherDomain := newRotationCA(t, "CA 4", now, t0.Add(-time.Hour), func(c *podcert.SignerConfig) { c.TrustDomain = "example.org" })
	late := newRotationCA(t, "CA 5", now, t0.Add(3*time.Hour), nil)
	spiffeKey := newCAKey(t)
	spiffeTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "CA 6"},
		NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(365 * 24 * time.Hour), URIs: []*url.URL{{Scheme: "spiffe", Host: "example.org"}},
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	spiffeDER, err := x509.CreateCertificate(rand.Reader, spiffeTmpl, spiffeTmpl, spiffeKey.Public(), spiffeKey)
	require.NoError(t, err)
	spiffeCA, err := x509.ParseCertificate(spiffeDER)
	require.NoError(t, err)
	otherSPIFFE, err := podcert.NewSigner(podcert.SignerConfig{SignerName: signerName, Key: spiffeKey, Chain: []*x509.Certificate{spiffeCA}})
	require.NoError(t, err)
	sameKey, err := podcert.NewSigner(podcert.SignerConfig{SignerName: signerName, Key: cur.key, Chain: []*x509.Certificate{cur.cert}})
	require.NoError(t, err)
	signsAt := t0.Add(2 * time.Hour)
	for _, tc := range []struct {
		name     string
		next     podcertctl.Rotation
		noBundle bool
		field    string
	}{
		{name: "no signer", next: podcertctl.Rotation{SignsAt: signsAt}, field: "Next.Signer"},
		{name: "no trust bundle", next: podcertctl.Rotation{Signer: nxt.signer, SignsAt: signsAt}, noBundle: true, field: "Next"},
		{name: "another signer name", next: podcertctl.Rotation{Signer: otherName.signer, SignsAt: signsAt}, field: "Next.Signer"},
		{name: "another trust domain", next: podcertctl.Rotation{Signer: otherDomain.signer, SignsAt: signsAt}, field: "Next.Signer"},
		{name: "a CA of another SPIFFE trust domain", next: podcertctl.Rotation{Signer: otherSPIFFE, SignsAt: signsAt}, field: "Next.Signer"},
		{name: "the current CA's key", next: podcertctl.Rotation{Signer: sameKey, SignsAt: signsAt}, field: "Next.Signer"},
		{name: "no time", next: podcertctl.Rotation{Signer: nxt.signer}, field: "Next.SignsAt"},
		{name: "negative propagation", next: podcertctl.Rotation{Signer: nxt.signer, SignsAt: signsAt, Propagation: -1}, field: "Next.Propagation"},
		{name: "negative skew", next: podcertctl.Rotation{Signer: nxt.signer, SignsAt: signsAt, Skew: -1}, field: "Next.Skew"},
		{name: "CA not valid yet when it signs", next: podcertctl.Rotation{Signer: late.signer, SignsAt: signsAt}, field: "Next.Signer"},
		{name: "CA expires before the retirement", next: podcertctl.Rotation{Signer: nxt.signer, SignsAt: t0.Add(364 * 24 * time.Hour)}, field: "Next.Signer"},
		{name: "a time before 1970", next: podcertctl.Rotation{Signer: nxt.signer, SignsAt: time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)}, field: "Next.SignsAt"},
		{name: "a propagation over 2^32 seconds", next: podcertctl.Rotation{Signer: nxt.signer, SignsAt: signsAt, Propagation: 1 << 62}, field: "Next.Propagation"},
		{name: "a skew over 2^32 seconds", next: podcertctl.Rotation{Signer: nxt.signer, SignsAt: signsAt, Skew: 1 << 62}, field: "Next.Skew"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := tc.next
			_, err := podcertctl.New(podcertctl.Config{Client: cs, Signer: cur.signer, NoTrustBundle: tc.noBundle, Next: &next})
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			assert.Equal(t, "podcertctl.Config."+tc.field, ce.Field)
		})
	}
}

// The documented defaults of a rotation and the labels' names.
func TestRotationDefaults(t *testing.T) {
	assert.Equal(t, time.Hour, podcertctl.DefaultPropagation)
	assert.Equal(t, 5*time.Minute, podcertctl.DefaultRotationSkew)
	assert.Equal(t, "ksa-go.github.io/canarying", podcertctl.CanaryingLabel)
	assert.Equal(t, "ksa-go.github.io/trust-domain", podcertctl.TrustDomainLabel)
}

// A trust domain longer than a label value may be (63 characters) is
// left out of the labels; the bundle is published all the same.
func TestTrustDomainLabelLeftOutWhenTooLong(t *testing.T) {
	td := strings.Repeat("a", 60) + ".example.org"
	ca := newRotationCA(t, "CA 1", func() time.Time { return t0 }, t0.Add(-time.Hour), func(c *podcert.SignerConfig) { c.TrustDomain = td })
	cs := fake.NewClientset()
	_, events := run(t, cs, podcertctl.Config{Signer: ca.signer, APIVersion: podcertctl.V1})
	require.Equal(t, podcertctl.TrustBundleWritten, nextEvent(t, events).Kind)
	assert.Equal(t, map[string]string{podcertctl.CanaryingLabel: "live"}, bundleOf(t, cs).Labels)
}

// A retirement the API server refuses to write is tried again after
// RetryDelay, and done then.
func TestControllerRetriesRetirement(t *testing.T) {
	clock := newTimer(t0)
	cur := newRotationCA(t, "CA 1", clock.Now, t0.Add(-time.Hour), nil)
	nxt := newRotationCA(t, "CA 2", clock.Now, t0.Add(-time.Hour), nil)
	signsAt := t0.Add(-time.Hour)
	retireAt := signsAt.Add(podcert.DefaultMaxLifetime + podcertctl.DefaultRotationSkew)
	published := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: bundleName},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: pemOf(cur, nxt)}}
	cs := fake.NewClientset(published)
	var refused atomic.Int32
	cs.PrependReactor("update", "clustertrustbundles", func(k8stesting.Action) (bool, runtime.Object, error) {
		if refused.Add(1) == 2 { // the first update labels the bundle at the start
			return true, nil, apierrors.NewServiceUnavailable("etcd down")
		}
		return false, nil, nil
	})
	_, events := run(t, cs, podcertctl.Config{Signer: cur.signer, APIVersion: podcertctl.V1,
		Next: &podcertctl.Rotation{Signer: nxt.signer, SignsAt: signsAt}, Now: clock.Now, After: clock.After})
	require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events))
	clock.wait(t)
	clock.set(retireAt)
	assert.Equal(t, podcertctl.RetryDelay, clock.wait(t), "tried again after RetryDelay")
	assert.Equal(t, pemOf(cur, nxt), bundleOf(t, cs).Spec.TrustBundle)
	clock.set(retireAt.Add(podcertctl.RetryDelay))
	require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events))
	require.Equal(t, podcertctl.CARetired, rotationEvent(t, events))
	assert.Equal(t, pemOf(nxt), bundleOf(t, cs).Spec.TrustBundle)
}

// TestControllerPostponesSwitchOnRevertedBundle: a bundle another writer
// reverted to the current CA alone before the switch is published again,
// and the switch waits Propagation from then (the retirement with it), so
// no pod gets a certificate of a CA it does not trust yet.
func TestControllerPostponesSwitchOnRevertedBundle(t *testing.T) {
	clock := newTimer(t0)
	cur := newRotationCA(t, "CA 1", clock.Now, t0.Add(-time.Hour), nil)
	nxt := newRotationCA(t, "CA 2", clock.Now, t0.Add(-time.Hour), nil)
	signsAt := t0.Add(2 * time.Hour)
	postponed := signsAt.Add(podcertctl.DefaultPropagation)
	cs := fake.NewClientset()
	ctl, events := run(t, cs, podcertctl.Config{Signer: cur.signer, CAKey: cur.key, APIVersion: podcertctl.V1,
		Next:   &podcertctl.Rotation{Signer: nxt.signer, CAKey: nxt.key, SignsAt: signsAt},
		Resync: 1000 * time.Hour, Now: clock.Now, After: clock.After})
	require.Equal(t, podcertctl.TrustBundleWritten, nextEvent(t, events).Kind)
	assert.Equal(t, 2*time.Hour, clock.wait(t))

	revert := func() {
		b := bundleOf(t, cs)
		b.Spec.TrustBundle = pemOf(cur) // a replica without the rotation, a rollback
		_, err := cs.CertificatesV1().ClusterTrustBundles().Update(context.Background(), b, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	revert()
	clock.set(signsAt)
	require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events))
	require.Equal(t, podcertctl.CASwitchPostponed, rotationEvent(t, events))
	assert.Equal(t, time.Hour, clock.wait(t), "waits for the postponed switch")
	assert.Equal(t, pemOf(cur, nxt), bundleOf(t, cs).Spec.TrustBundle, "both CAs published again")
	assert.Equal(t, postponed, ctl.SwitchAt())
	assert.Equal(t, postponed.Add(podcert.DefaultMaxLifetime+podcertctl.DefaultRotationSkew), ctl.RetireAt(), "the retirement moves with the switch")
	assert.Equal(t, map[string]string{"CN=CA 1": podcertctl.CASigning, "CN=CA 2": podcertctl.CANext}, states(ctl))
	require.NoError(t, issue(t, cs, events, "req-1").CheckSignatureFrom(cur.cert), "the current CA signs until the postponed switch")

	clock.set(postponed)
	require.Equal(t, podcertctl.CASwitched, rotationEvent(t, events))
	require.NoError(t, issue(t, cs, events, "req-2").CheckSignatureFrom(nxt.cert))
}

// TestControllerRepublishesOnResync: during the overlap the bundle is
// read again every Resync; one found without a CA is published again.
func TestControllerRepublishesOnResync(t *testing.T) {
	clock := newTimer(t0)
	cur := newRotationCA(t, "CA 1", clock.Now, t0.Add(-time.Hour), nil)
	nxt := newRotationCA(t, "CA 2", clock.Now, t0.Add(-time.Hour), nil)
	published := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: bundleName},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: pemOf(cur, nxt)}}
	cs := fake.NewClientset(published)
	_, events := run(t, cs, podcertctl.Config{Signer: cur.signer, CAKey: cur.key, APIVersion: podcertctl.V1,
		Next:   &podcertctl.Rotation{Signer: nxt.signer, CAKey: nxt.key, SignsAt: t0.Add(-time.Hour)},
		Resync: 10 * time.Minute, Now: clock.Now, After: clock.After})
	require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events), "labels set")
	assert.Equal(t, 10*time.Minute, clock.wait(t), "reads the bundle again every Resync")
	for _, have := range []string{pemOf(cur), pemOf(nxt)} {
		b := bundleOf(t, cs)
		b.Spec.TrustBundle = have
		_, err := cs.CertificatesV1().ClusterTrustBundles().Update(context.Background(), b, metav1.UpdateOptions{})
		require.NoError(t, err)
		clock.set(clock.Now().Add(10 * time.Minute))
		require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events))
		assert.Equal(t, 10*time.Minute, clock.wait(t))
		assert.Equal(t, pemOf(cur, nxt), bundleOf(t, cs).Spec.TrustBundle)
	}
}

// TestControllerWithoutRotationKeepsOtherCAs: a replica started without
// the rotation, while the published bundle holds another replica's next
// CA, keeps it (after its own CA) rather than dropping a CA pods may be
// given certificates of; an expired CA or a certificate that is no CA is
// dropped.
func TestControllerWithoutRotationKeepsOtherCAs(t *testing.T) {
	clock := newTimer(t0)
	cur := newRotationCA(t, "CA 1", clock.Now, t0.Add(-time.Hour), nil)
	nxt := newRotationCA(t, "CA 2", clock.Now, t0.Add(-time.Hour), nil)
	expired := newRotationCA(t, "CA 3", clock.Now, t0.Add(-time.Hour), nil)
	expiredKey := newCAKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "CA 3"},
		NotBefore: t0.Add(-48 * time.Hour), NotAfter: t0.Add(-time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, expiredKey.Public(), expiredKey)
	require.NoError(t, err)
	expired.cert, err = x509.ParseCertificate(der)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, have, want string
	}{
		{name: "a rotation's next CA", have: pemOf(cur, nxt), want: pemOf(cur, nxt)},
		{name: "the next CA alone (after a retirement)", have: pemOf(nxt), want: pemOf(cur, nxt)},
		{name: "an expired CA", have: pemOf(expired, cur), want: pemOf(cur)},
		{name: "nothing else", have: pemOf(cur), want: pemOf(cur)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(&certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: bundleName},
				Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: tc.have}})
			_, events := run(t, cs, podcertctl.Config{Signer: cur.signer, APIVersion: podcertctl.V1, Now: clock.Now, After: clock.After})
			require.Equal(t, podcertctl.TrustBundleWritten, nextEvent(t, events).Kind)
			assert.Equal(t, tc.want, bundleOf(t, cs).Spec.TrustBundle)
		})
	}
}

// TestControllerRestartsWaitOnResync: a bundle found without the next CA
// on a resync before the switch, nearer the switch than Propagation, is
// published again and the next CA's wait starts again (the schedule's
// Repair with Restart): the switch moves to Propagation from then, the
// retirement with it. One found so far ahead that the wait is over before
// the switch is published again and the switch stays.
func TestControllerRestartsWaitOnResync(t *testing.T) {
	clock := newTimer(t0)
	cur := newRotationCA(t, "CA 1", clock.Now, t0.Add(-time.Hour), nil)
	nxt := newRotationCA(t, "CA 2", clock.Now, t0.Add(-time.Hour), nil)
	signsAt := t0.Add(2 * time.Hour)
	cs := fake.NewClientset()
	ctl, events := run(t, cs, podcertctl.Config{Signer: cur.signer, CAKey: cur.key, APIVersion: podcertctl.V1,
		Next:   &podcertctl.Rotation{Signer: nxt.signer, CAKey: nxt.key, SignsAt: signsAt},
		Resync: 30 * time.Minute, Now: clock.Now, After: clock.After})
	require.Equal(t, podcertctl.TrustBundleWritten, nextEvent(t, events).Kind)
	assert.Equal(t, 30*time.Minute, clock.wait(t))
	revert := func() {
		b := bundleOf(t, cs)
		b.Spec.TrustBundle = pemOf(cur)
		_, err := cs.CertificatesV1().ClusterTrustBundles().Update(context.Background(), b, metav1.UpdateOptions{})
		require.NoError(t, err)
	}

	revert() // an hour and a half before the switch: the wait is over in time
	clock.set(t0.Add(30 * time.Minute))
	require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events))
	assert.Equal(t, 30*time.Minute, clock.wait(t))
	assert.Equal(t, signsAt, ctl.SwitchAt(), "the switch stays")
	assert.Equal(t, pemOf(cur, nxt), bundleOf(t, cs).Spec.TrustBundle)

	revert() // half an hour before the switch: the wait starts again
	clock.set(t0.Add(90 * time.Minute))
	require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events))
	require.Equal(t, podcertctl.CASwitchPostponed, rotationEvent(t, events))
	postponed := t0.Add(90*time.Minute + podcertctl.DefaultPropagation)
	assert.Equal(t, postponed, ctl.SwitchAt())
	assert.Equal(t, postponed.Add(podcert.DefaultMaxLifetime+podcertctl.DefaultRotationSkew), ctl.RetireAt())
	assert.Equal(t, 30*time.Minute, clock.wait(t), "read again every Resync")
	assert.Equal(t, map[string]string{"CN=CA 1": podcertctl.CASigning, "CN=CA 2": podcertctl.CANext}, states(ctl))

	clock.set(signsAt) // the flag's switch is past, the schedule's to come
	assert.Equal(t, 30*time.Minute, clock.wait(t))
	require.NoError(t, issue(t, cs, events, "req-1").CheckSignatureFrom(cur.cert))
	clock.set(postponed)
	require.Equal(t, podcertctl.CASwitched, rotationEvent(t, events))
	require.NoError(t, issue(t, cs, events, "req-2").CheckSignatureFrom(nxt.cert))
}
