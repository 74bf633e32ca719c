package podcertctl_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// OldestUndecided is the creation time of the oldest request of the
// signer name without an outcome: decided requests and other signers'
// do not count, a request the controller gave up on does until it is
// decided, and none leaves the zero time.
func TestOldestUndecided(t *testing.T) {
	at := func(ago time.Duration) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "shop", CreationTimestamp: metav1.NewTime(t0.Add(-ago))}
	}
	decided := &certificatesv1.PodCertificateRequest{ObjectMeta: at(time.Hour), Spec: spec(t, signerName, ""),
		Status: certificatesv1.PodCertificateRequestStatus{Conditions: []metav1.Condition{
			{Type: podcert.ConditionDenied, Status: metav1.ConditionTrue, Reason: "Other", LastTransitionTime: metav1.NewTime(t0)}}}}
	decided.Name = "decided"
	other := &certificatesv1.PodCertificateRequest{ObjectMeta: at(2 * time.Hour), Spec: spec(t, "example.com/other", "")}
	other.Name = "other"
	older := &certificatesv1.PodCertificateRequest{ObjectMeta: at(5 * time.Minute), Spec: spec(t, signerName, "")}
	older.Name = "older"
	newer := &certificatesv1.PodCertificateRequest{ObjectMeta: at(time.Minute), Spec: spec(t, signerName, "")}
	newer.Name = "newer"
	cs := fake.NewClientset(decided, other, older, newer)
	var refuse atomic.Bool
	refuse.Store(true)
	cs.PrependReactor("update", "podcertificaterequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && refuse.Load() {
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "certificates.k8s.io", Kind: "PodCertificateRequest"}, "x",
				field.ErrorList{field.Invalid(field.NewPath("status"), nil, "refused")})
		}
		return false, nil, nil
	})
	ctl, events := run(t, cs, podcertctl.Config{APIVersion: podcertctl.V1})

	// The API server refuses both statuses: the controller gives up.
	gaveUp := map[string]bool{}
	for len(gaveUp) < 2 {
		if e := next(t, events); e.Kind == podcertctl.Errored {
			require.False(t, e.Retry)
			gaveUp[e.Name] = true
		}
	}
	assert.Equal(t, t0.Add(-5*time.Minute), ctl.OldestUndecided())

	// Both change (as when the kubelet or an operator touches them): decided.
	refuse.Store(false)
	for _, name := range []string{"older", "newer"} {
		got, err := cs.CertificatesV1().PodCertificateRequests("shop").Get(context.Background(), name, metav1.GetOptions{})
		require.NoError(t, err)
		got.Labels = map[string]string{"touched": "yes"}
		_, err = cs.CertificatesV1().PodCertificateRequests("shop").Update(context.Background(), got, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	// Each is decided, then read back decided from the informer's cache
	// (Skipped): only then does the cache hold its outcome.
	seen := map[string][]podcertctl.EventKind{}
	for len(seen["older"]) < 2 || len(seen["newer"]) < 2 {
		e := next(t, events)
		if e.Name == "older" || e.Name == "newer" {
			seen[e.Name] = append(seen[e.Name], e.Kind)
		}
	}
	assert.Equal(t, []podcertctl.EventKind{podcertctl.Decided, podcertctl.Skipped}, seen["older"])
	assert.Equal(t, []podcertctl.EventKind{podcertctl.Decided, podcertctl.Skipped}, seen["newer"])
	assert.True(t, ctl.OldestUndecided().IsZero(), "%v", ctl.OldestUndecided())
}

// A trust bundle already equal to the CA's, labels included, is not
// written again.
func TestControllerLeavesTrustBundleUpToDate(t *testing.T) {
	signer := newSigner(t)
	current := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:pods:primary-bundle",
		Labels: map[string]string{podcertctl.CanaryingLabel: "live", podcertctl.TrustDomainLabel: "cluster.local", "team": "shop"}},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: string(signer.TrustBundle())}}
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-1"}, Spec: spec(t, signerName, "")}
	cs := fake.NewClientset(current, pcr)
	_, events := run(t, cs, podcertctl.Config{Signer: signer, APIVersion: podcertctl.V1})
	e := nextEvent(t, events)
	assert.Equal(t, podcertctl.Decided, e.Kind, "no TrustBundleWritten first")
	for _, a := range cs.Actions() {
		assert.False(t, a.GetVerb() == "update" && a.GetResource().Resource == "clustertrustbundles", "bundle updated")
	}
}
