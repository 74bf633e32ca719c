package podcertctl_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

func fingerprintOf(ca rotationCA) string {
	sum := sha256.Sum256(ca.cert.Raw)
	return hex.EncodeToString(sum[:])
}

func record(ca rotationCA, at string) map[string]string {
	return map[string]string{podcertctl.NextCAAnnotation: fingerprintOf(ca), podcertctl.SwitchAtAnnotation: at}
}

// recordOf is the record a rotation from cur to next writes: the switch,
// and the CA it retires.
func recordOf(cur, next rotationCA, at string) map[string]string {
	m := record(next, at)
	m[podcertctl.RetiringCAAnnotation] = fingerprintOf(cur)
	return m
}

// TestControllerRestartKeepsRecordedSwitch: a controller started again
// after a postponement keeps the switch, and the retirement, the bundle
// records for its next CA: neither the flag's switch nor its retirement
// comes back. A record of another next CA, a malformed one (with a
// warning) or an earlier one never moves the switch.
func TestControllerRestartKeepsRecordedSwitch(t *testing.T) {
	signsAt := t0.Add(2 * time.Hour)
	lifetime := podcert.DefaultMaxLifetime + podcertctl.DefaultRotationSkew
	postponed := signsAt.Add(3 * time.Hour)
	clock := newTimer(t0)
	cur := newRotationCA(t, "CA 1", clock.Now, t0.Add(-time.Hour), nil)
	nxt := newRotationCA(t, "CA 2", clock.Now, t0.Add(-time.Hour), nil)
	other := newRotationCA(t, "CA 3", clock.Now, t0.Add(-time.Hour), nil)
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	for _, tc := range []struct {
		name       string
		at         time.Time
		record     map[string]string
		wantSwitch time.Time
		signer     rotationCA
		want       string // the bundle published
		wait       time.Duration
		warn       string // a warning logged
	}{
		{name: "past SignsAt, before the recorded switch: the current CA signs", at: signsAt.Add(time.Hour),
			record: record(nxt, stamp(postponed)), wantSwitch: postponed, signer: cur, want: pemOf(cur, nxt), wait: 2 * time.Hour},
		{name: "past the flag's retirement, before the recorded one: both CAs stay", at: signsAt.Add(lifetime + time.Hour),
			record: record(nxt, stamp(postponed)), wantSwitch: postponed, signer: nxt, want: pemOf(cur, nxt),
			wait: postponed.Add(lifetime).Sub(signsAt.Add(lifetime + time.Hour))},
		{name: "a record of another next CA is ignored", at: signsAt.Add(time.Hour),
			record: record(other, stamp(postponed)), wantSwitch: signsAt, signer: nxt, want: pemOf(cur, nxt),
			wait: signsAt.Add(lifetime).Sub(signsAt.Add(time.Hour))},
		{name: "an earlier record never moves the switch earlier", at: t0,
			record: record(nxt, stamp(t0.Add(time.Minute))), wantSwitch: signsAt, signer: cur, want: pemOf(cur, nxt), wait: 2 * time.Hour},
		{name: "a malformed time is ignored with a warning", at: t0,
			record: record(nxt, "tomorrow"), wantSwitch: signsAt, signer: cur, want: pemOf(cur, nxt), wait: 2 * time.Hour,
			warn: "the published trust bundle holds a malformed switch record; ignoring it"},
		{name: "a time without a CA is ignored with a warning", at: t0,
			record: map[string]string{podcertctl.SwitchAtAnnotation: stamp(postponed)}, wantSwitch: signsAt, signer: cur, want: pemOf(cur, nxt), wait: 2 * time.Hour,
			warn: "the published trust bundle holds a malformed switch record; ignoring it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock.set(tc.at)
			have := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: bundleName, Annotations: tc.record},
				Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: pemOf(cur, nxt)}}
			cs := fake.NewClientset(have)
			var logs syncBuffer
			ctl, events, stop := start(t, cs, podcertctl.Config{Signer: cur.signer, CAKey: cur.key, APIVersion: podcertctl.V1,
				Next:   &podcertctl.Rotation{Signer: nxt.signer, CAKey: nxt.key, SignsAt: signsAt},
				Resync: 1000 * time.Hour, Now: clock.Now, After: clock.After, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
			assert.Equal(t, tc.wait, clock.wait(t))
			assert.Equal(t, tc.wantSwitch, ctl.SwitchAt())
			assert.Equal(t, tc.wantSwitch.Add(lifetime), ctl.RetireAt(), "the retirement follows the switch")
			require.NoError(t, issue(t, cs, events, "req-1").CheckSignatureFrom(tc.signer.cert))
			b := bundleOf(t, cs)
			assert.Equal(t, tc.want, b.Spec.TrustBundle)
			assert.Equal(t, recordOf(cur, nxt, stamp(tc.wantSwitch)), b.Annotations, "the bundle records the switch kept")
			stop()
			var warned bool
			for _, line := range logs.lines(t) {
				warned = warned || (line["level"] == "WARN" && line["msg"] == tc.warn)
			}
			assert.Equal(t, tc.warn != "", warned, "warning %q", tc.warn)
		})
	}
}

// TestControllerKeepsSwitchRecord: the record of the switch is written
// with the bundle, moves with a postponement, comes back when another
// writer drops it, and goes at the retirement; others' annotations stay.
func TestControllerKeepsSwitchRecord(t *testing.T) {
	clock := newTimer(t0)
	cur := newRotationCA(t, "CA 1", clock.Now, t0.Add(-time.Hour), nil)
	nxt := newRotationCA(t, "CA 2", clock.Now, t0.Add(-time.Hour), nil)
	signsAt := t0.Add(2 * time.Hour)
	postponed := signsAt.Add(podcertctl.DefaultPropagation)
	retireAt := postponed.Add(podcert.DefaultMaxLifetime + podcertctl.DefaultRotationSkew)
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	withOthers := func(m map[string]string) map[string]string {
		out := map[string]string{"example.com/owner": "platform"}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	have := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: bundleName, Annotations: withOthers(nil)},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: pemOf(cur)}}
	cs := fake.NewClientset(have)
	_, events := run(t, cs, podcertctl.Config{Signer: cur.signer, CAKey: cur.key, APIVersion: podcertctl.V1,
		Next:   &podcertctl.Rotation{Signer: nxt.signer, CAKey: nxt.key, SignsAt: signsAt},
		Resync: 1000 * time.Hour, Now: clock.Now, After: clock.After})
	require.Equal(t, podcertctl.TrustBundleWritten, nextEvent(t, events).Kind)
	assert.Equal(t, 2*time.Hour, clock.wait(t))
	assert.Equal(t, withOthers(recordOf(cur, nxt, stamp(signsAt))), bundleOf(t, cs).Annotations, "recorded when published")

	update := func(pem string, annotations map[string]string) {
		b := bundleOf(t, cs)
		b.Spec.TrustBundle, b.Annotations = pem, annotations
		_, err := cs.CertificatesV1().ClusterTrustBundles().Update(context.Background(), b, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	update(pemOf(cur), withOthers(nil)) // a rollback dropping the CA and the record
	clock.set(signsAt)
	require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events))
	require.Equal(t, podcertctl.CASwitchPostponed, rotationEvent(t, events))
	assert.Equal(t, time.Hour, clock.wait(t))
	assert.Equal(t, withOthers(recordOf(cur, nxt, stamp(postponed))), bundleOf(t, cs).Annotations, "the postponed switch recorded")

	update(pemOf(cur, nxt), withOthers(nil)) // the CAs kept, the record dropped
	clock.set(postponed)
	require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events), "the record written again")
	require.Equal(t, podcertctl.CASwitched, rotationEvent(t, events))
	assert.Equal(t, retireAt.Sub(postponed), clock.wait(t))
	assert.Equal(t, withOthers(recordOf(cur, nxt, stamp(postponed))), bundleOf(t, cs).Annotations)

	clock.set(retireAt)
	require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events))
	require.Equal(t, podcertctl.CARetired, rotationEvent(t, events))
	b := bundleOf(t, cs)
	assert.Equal(t, pemOf(nxt), b.Spec.TrustBundle)
	assert.Equal(t, withOthers(nil), b.Annotations, "the record goes at the retirement, others' annotations stay")
}

// TestControllerCapsSwitchRecord: a record far in the future (anyone who
// may update the bundle can write one) postpones the switch no further
// than the rotation allows: the current CA issues certificates of the
// full lifetime until the switch, and the next CA outlives the
// retirement that follows. The record is capped there, with a warning and
// an event, and the bundle records the switch kept.
func TestControllerCapsSwitchRecord(t *testing.T) {
	signsAt := t0.Add(2 * time.Hour)
	const year = 365 * 24 * time.Hour
	lifetime, skew := podcert.DefaultMaxLifetime, podcertctl.DefaultRotationSkew
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	for _, tc := range []struct {
		name                string
		curUntil, nextUntil time.Time
		want                time.Time
	}{
		{name: "the next CA's expiry bounds it", curUntil: t0.Add(2 * year), nextUntil: t0.Add(year),
			want: t0.Add(year - lifetime - skew)},
		{name: "the current CA's expiry bounds it", curUntil: t0.Add(30 * 24 * time.Hour), nextUntil: t0.Add(year),
			want: t0.Add(30*24*time.Hour - lifetime)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newTimer(signsAt.Add(time.Hour))
			cur := newRotationCAUntil(t, "CA 1", clock.Now, t0.Add(-time.Hour), tc.curUntil, nil)
			nxt := newRotationCAUntil(t, "CA 2", clock.Now, t0.Add(-time.Hour), tc.nextUntil, nil)
			have := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: bundleName, Annotations: record(nxt, "2126-01-01T00:00:00Z")},
				Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: pemOf(cur, nxt)}}
			cs := fake.NewClientset(have)
			var logs syncBuffer
			ctl, events, stop := start(t, cs, podcertctl.Config{Signer: cur.signer, CAKey: cur.key, APIVersion: podcertctl.V1,
				Next:   &podcertctl.Rotation{Signer: nxt.signer, CAKey: nxt.key, SignsAt: signsAt},
				Resync: 1000 * time.Hour, Now: clock.Now, After: clock.After, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
			require.Equal(t, podcertctl.CASwitchRecordCapped, rotationEvent(t, events))
			require.Equal(t, podcertctl.TrustBundleWritten, rotationEvent(t, events), "the capped switch recorded")
			clock.wait(t)
			assert.Equal(t, tc.want, ctl.SwitchAt())
			assert.Equal(t, tc.want.Add(lifetime+skew), ctl.RetireAt())
			assert.Equal(t, recordOf(cur, nxt, stamp(tc.want)), bundleOf(t, cs).Annotations)
			require.NoError(t, issue(t, cs, events, "req-1").CheckSignatureFrom(cur.cert), "the current CA signs until then")
			stop()
			var warned bool
			for _, line := range logs.lines(t) {
				warned = warned || (line["level"] == "WARN" &&
					line["msg"] == "the published trust bundle records a switch later than the rotation allows; keeping the latest safe switch instead" &&
					line["latest"] == stamp(tc.want))
			}
			assert.True(t, warned, "warned")
		})
	}
}
