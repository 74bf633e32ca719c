package podcertctl_test

import (
	"context"
	"crypto/x509"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// haClock is a settable clock shared by several controllers: each
// replica's After is tagged with its name, so a test waits until every
// loop of the replicas it names is parked (settle) before it moves the
// clock, and nothing depends on how fast goroutines run.
type haClock struct {
	mu      sync.Mutex
	cond    *sync.Cond
	now     time.Time
	waiters []haWaiter
}

type haWaiter struct {
	who string
	at  time.Time
	ch  chan time.Time
}

func newHAClock(t time.Time) *haClock {
	c := &haClock{now: t}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *haClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// after is the After of replica who.
func (c *haClock) after(who string) func(time.Duration) <-chan time.Time {
	return func(d time.Duration) <-chan time.Time {
		c.mu.Lock()
		defer c.mu.Unlock()
		ch := make(chan time.Time, 1)
		c.waiters = append(c.waiters, haWaiter{who: who, at: c.now.Add(d), ch: ch})
		c.cond.Broadcast()
		return ch
	}
}

// add moves the clock by d, firing the waiters due.
func (c *haClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// settle waits until each replica named has n loops waiting on the clock
// (leader election and following the bundle: 2).
func (c *haClock) settle(t *testing.T, n int, who ...string) {
	t.Helper()
	deadline := time.AfterFunc(30*time.Second, func() { c.cond.Broadcast() })
	defer deadline.Stop()
	start := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		ok := true
		for _, name := range who {
			k := 0
			for _, w := range c.waiters {
				if w.who == name {
					k++
				}
			}
			ok = ok && k >= n
		}
		if ok {
			return
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the replicas %v do not wait", who)
		}
		c.cond.Wait()
	}
}

// step moves the clock by d in steps of at most one second, letting the
// replicas named settle before each.
func (c *haClock) step(t *testing.T, d time.Duration, who ...string) {
	t.Helper()
	for d > 0 {
		s := min(d, time.Second)
		c.settle(t, 2, who...)
		c.add(s)
		d -= s
	}
	c.settle(t, 2, who...)
}

// optimistic makes cs refuse updates of requests and Leases that carry a
// resourceVersion other than the stored one, as the API server does (the
// fake clientset does not), and counts the conflicts it returned.
func optimistic(cs *fake.Clientset) *atomic.Int64 {
	var conflicts atomic.Int64
	var rv atomic.Int64
	bump := func(obj runtime.Object) {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetResourceVersion(strconv.FormatInt(rv.Add(1), 10))
		}
	}
	for _, res := range []string{"podcertificaterequests", "leases"} {
		cs.PrependReactor("create", res, func(a k8stesting.Action) (bool, runtime.Object, error) {
			bump(a.(k8stesting.CreateAction).GetObject())
			return false, nil, nil
		})
		cs.PrependReactor("update", res, func(a k8stesting.Action) (bool, runtime.Object, error) {
			obj := a.(k8stesting.UpdateAction).GetObject()
			m, err := meta.Accessor(obj)
			if err != nil {
				return true, nil, err
			}
			stored, err := cs.Tracker().Get(a.GetResource(), a.GetNamespace(), m.GetName())
			if err != nil {
				return true, nil, err
			}
			sm, _ := meta.Accessor(stored)
			if sm.GetResourceVersion() != m.GetResourceVersion() {
				conflicts.Add(1)
				return true, nil, apierrors.NewConflict(a.GetResource().GroupResource(), m.GetName(), errors.New("the object has been modified"))
			}
			bump(obj)
			return false, nil, nil
		})
	}
	return &conflicts
}

// cuttable is a replica's client whose Leases can be cut off, as from a
// pod deleted or partitioned: it renews no more, and gives nothing up.
type cuttable struct {
	podcertctl.LeaseClient
	cut atomic.Bool
}

func (c *cuttable) Leases(ns string) podcertctl.Leases {
	return cutLeases{c.LeaseClient.Leases(ns), &c.cut}
}

func (c *cuttable) IsWatchListSemanticsUnSupported() bool { return true }

type cutLeases struct {
	podcertctl.Leases
	cut *atomic.Bool
}

var errCut = errors.New("connection refused")

func (l cutLeases) Get(ctx context.Context, name string, o metav1.GetOptions) (*coordinationv1.Lease, error) {
	if l.cut.Load() {
		return nil, errCut
	}
	return l.Leases.Get(ctx, name, o)
}

func (l cutLeases) Update(ctx context.Context, le *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if l.cut.Load() {
		return nil, errCut
	}
	return l.Leases.Update(ctx, le, o)
}

// replica is one controller of several sharing a fake API server.
type replica struct {
	name   string
	ctl    *podcertctl.Controller
	client *cuttable
	events chan podcertctl.Event
	stop   func()
}

// startReplica runs a controller of cfg named name (its Lease identity)
// on cs and clock; its Decided events go to decided too.
func startReplica(t *testing.T, cs *fake.Clientset, clock *haClock, decided chan<- podcertctl.Event, name string, cfg podcertctl.Config) *replica {
	t.Helper()
	r := &replica{name: name, client: &cuttable{LeaseClient: fakeClient(t, cs).(podcertctl.LeaseClient)}, events: make(chan podcertctl.Event, 4096)}
	le := *cfg.LeaderElection
	le.Identity = name
	cfg.LeaderElection = &le
	cfg.Client, cfg.Now, cfg.After = r.client, clock.Now, clock.after(name)
	cfg.Observe = func(e podcertctl.Event) {
		if e.Kind == podcertctl.Decided {
			decided <- e
		}
		r.events <- e
	}
	ctl, err := podcertctl.New(cfg)
	require.NoError(t, err)
	r.ctl = ctl
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(r.stop)
	return r
}

// kinds drains the events so far and counts them by kind.
func (r *replica) kinds() map[podcertctl.EventKind]int {
	out := map[podcertctl.EventKind]int{}
	for {
		select {
		case e := <-r.events:
			out[e.Kind]++
		default:
			return out
		}
	}
}

// wait waits for an event of kind, passing over the others.
func (r *replica) wait(t *testing.T, kind podcertctl.EventKind) podcertctl.Event {
	t.Helper()
	for {
		if e := nextEvent(t, r.events); e.Kind == kind {
			return e
		}
	}
}

// leaderOf returns the replica that holds the Lease and the others.
func leaderOf(t *testing.T, rs ...*replica) (*replica, []*replica) {
	t.Helper()
	var leader *replica
	var others []*replica
	for _, r := range rs {
		if r.ctl.Leading() {
			require.Nil(t, leader, "two replicas lead")
			leader = r
		} else {
			others = append(others, r)
		}
	}
	require.NotNil(t, leader, "no replica leads")
	return leader, others
}

// bundleWatch records every write of the trust bundle and checks, as it
// is written, that it holds the CA of every certificate issued that is
// still valid (the issued leaves, from Decided events).
type bundleWatch struct {
	mu     sync.Mutex
	now    func() time.Time
	leaves []*x509.Certificate
	writes int
	stale  []string
}

func watchBundle(cs *fake.Clientset, now func() time.Time) *bundleWatch {
	bw := &bundleWatch{now: now}
	check := func(a k8stesting.Action) (bool, runtime.Object, error) {
		// Creates and updates alike carry the object written.
		w, ok := a.(interface{ GetObject() runtime.Object })
		if !ok {
			return false, nil, nil
		}
		if b, ok := w.GetObject().(*certificatesv1.ClusterTrustBundle); ok {
			bw.written(b.Spec.TrustBundle)
		}
		return false, nil, nil
	}
	cs.PrependReactor("create", "clustertrustbundles", check)
	cs.PrependReactor("update", "clustertrustbundles", check)
	return bw
}

func (w *bundleWatch) issued(leaf *x509.Certificate) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.leaves = append(w.leaves, leaf)
}

func (w *bundleWatch) written(bundle string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(bundle))
	now := w.now()
	for _, l := range w.leaves {
		if now.After(l.NotAfter) {
			continue
		}
		if _, err := l.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			w.stale = append(w.stale, l.Subject.String()+": "+err.Error())
		}
	}
}

// issueOnce creates a request and waits until a replica has decided it
// (an event on decided), returning its leaf.
func issueOnce(t *testing.T, cs *fake.Clientset, decided <-chan podcertctl.Event, name string) *x509.Certificate {
	t.Helper()
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Spec: spec(t, signerName, "")}
	_, err := cs.CertificatesV1().PodCertificateRequests("shop").Create(context.Background(), pcr, metav1.CreateOptions{})
	require.NoError(t, err)
	for {
		if e := nextEvent(t, decided); e.Name == name {
			require.Equal(t, podcert.Issued, e.Decision.Outcome)
			return e.Decision.Leaf
		}
	}
}

// TestReplicasElectOnePublisher: two controllers on one API server, with
// leader election: one holds the Lease and alone writes the trust bundle;
// both decide requests, each decided once, the second writer of a status
// refused (a conflict, counted in Stats and by the API server alike).
func TestReplicasElectOnePublisher(t *testing.T) {
	clock := newHAClock(t0)
	cs := fake.NewClientset()
	conflicts := optimistic(cs)
	decided := make(chan podcertctl.Event, 4096)
	cfg := podcertctl.Config{Signer: newSigner(t), APIVersion: podcertctl.V1, Resync: 1000 * time.Hour,
		LeaderElection: &podcertctl.LeaderElectionConfig{Namespace: "ksa"}}
	a := startReplica(t, cs, clock, decided, "a", cfg)
	b := startReplica(t, cs, clock, decided, "b", cfg)
	clock.step(t, 3*podcertctl.DefaultLeaseDuration, "a", "b")
	leader, others := leaderOf(t, a, b)
	other := others[0]
	lk, ok := leader.kinds(), other.kinds()
	assert.Equal(t, 1, lk[podcertctl.LeaseAcquired], "held once, renewed since")
	assert.Equal(t, 1, lk[podcertctl.TrustBundleWritten], "the holder publishes")
	assert.Zero(t, ok[podcertctl.LeaseAcquired]+ok[podcertctl.TrustBundleWritten], "the other replica neither holds nor publishes")
	lease, err := cs.CoordinationV1().Leases("ksa").Get(context.Background(), podcertctl.DefaultLeaseName(signerName), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, leader.name, *lease.Spec.HolderIdentity)
	assert.Equal(t, int32(15), *lease.Spec.LeaseDurationSeconds)

	const n = 40
	for i := range n {
		issueOnce(t, cs, decided, "req-"+strconv.Itoa(i))
	}
	sa, sb := a.ctl.Stats(), b.ctl.Stats()
	assert.Equal(t, int64(n), sa.Issued+sb.Issued, "each request issued once")
	assert.Equal(t, conflicts.Load(), sa.Conflicts+sb.Conflicts, "every conflict counted")
	t.Logf("%d requests: issued by a %d, by b %d; conflicts %d", n, sa.Issued, sb.Issued, sa.Conflicts+sb.Conflicts)
	list, err := cs.CertificatesV1().PodCertificateRequests("shop").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	for _, p := range list.Items {
		assert.Len(t, p.Status.Conditions, 1, "%s decided once", p.Name)
	}
	assert.Zero(t, other.kinds()[podcertctl.TrustBundleWritten])
}

// noLeases is a Client without Leases.
type noLeases struct{ podcertctl.Client }

// TestLeaderElectionDefaults: the documented defaults, and the checks of
// New.
func TestLeaderElectionDefaults(t *testing.T) {
	assert.Equal(t, 15*time.Second, podcertctl.DefaultLeaseDuration)
	assert.Equal(t, 10*time.Second, podcertctl.DefaultRenewDeadline)
	assert.Equal(t, 2*time.Second, podcertctl.DefaultRetryPeriod)
	assert.Equal(t, "ksa-podcert.example.com.pods", podcertctl.DefaultLeaseName("example.com/pods"))
	cs := fake.NewClientset()
	for _, tc := range []struct {
		name      string
		le        podcertctl.LeaderElectionConfig
		noBundle  bool
		client    podcertctl.Client
		wantField string
	}{
		{name: "defaults", le: podcertctl.LeaderElectionConfig{Namespace: "ksa", Identity: "pod-1"}},
		{name: "no namespace", le: podcertctl.LeaderElectionConfig{Identity: "pod-1"}, wantField: "Namespace"},
		{name: "no identity", le: podcertctl.LeaderElectionConfig{Namespace: "ksa"}, wantField: "Identity"},
		{name: "bad name", le: podcertctl.LeaderElectionConfig{Namespace: "ksa", Identity: "p", Name: "Not_A_Name"}, wantField: "Name"},
		{name: "negative", le: podcertctl.LeaderElectionConfig{Namespace: "ksa", Identity: "p", RetryPeriod: -time.Second}, wantField: "RetryPeriod"},
		{name: "renew deadline not over retry period", le: podcertctl.LeaderElectionConfig{Namespace: "ksa", Identity: "p", RetryPeriod: 10 * time.Second}, wantField: "RenewDeadline"},
		{name: "lease duration not over renew deadline", le: podcertctl.LeaderElectionConfig{Namespace: "ksa", Identity: "p", LeaseDuration: 10 * time.Second}, wantField: "LeaseDuration"},
		{name: "lease duration over a day", le: podcertctl.LeaderElectionConfig{Namespace: "ksa", Identity: "p", LeaseDuration: 25 * time.Hour}, wantField: "LeaseDuration"},
		{name: "a client without Leases", le: podcertctl.LeaderElectionConfig{Namespace: "ksa", Identity: "p"}, client: noLeases{}, wantField: "podcertctl.Config.LeaderElection"},
		{name: "nothing to publish", le: podcertctl.LeaderElectionConfig{Namespace: "ksa", Identity: "p"}, noBundle: true, wantField: "podcertctl.Config.LeaderElection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			le := tc.le
			client := tc.client
			if client == nil {
				client = fakeClient(t, cs)
			}
			_, err := podcertctl.New(podcertctl.Config{Client: client, Signer: newSigner(t), NoTrustBundle: tc.noBundle, LeaderElection: &le})
			if tc.wantField == "" {
				require.NoError(t, err)
				return
			}
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, ce.Field, tc.wantField)
		})
	}
}

// TestLeaseTakeoverMidRotation: the Lease's holder stops in the overlap of
// a CA rotation, giving the Lease up (its context cancelled) or not (its
// pod deleted, the API server out of its reach): the other replica takes
// over, at its next try or once the Lease has expired, keeps issuing with
// the next CA, and retires the former one at the retirement; no bundle
// written ever lacks the CA of a live certificate. A standby without the
// rotation (another configuration, the stale replica of the field's
// failure) keeps the next CA published too.
func TestLeaseTakeoverMidRotation(t *testing.T) {
	const lifetime = time.Hour
	const step = podcertctl.DefaultRetryPeriod
	for _, tc := range []struct {
		name string
		// deleted: the holder's Lease is not given up.
		deleted bool
		// stale: the standby runs without the rotation.
		stale bool
		// wantTake bounds the takeover, after the holder stops.
		wantTake [2]time.Duration
	}{
		{name: "holder stopped", wantTake: [2]time.Duration{step, step}},
		{name: "holder's pod deleted", deleted: true,
			wantTake: [2]time.Duration{podcertctl.DefaultLeaseDuration - step, podcertctl.DefaultLeaseDuration + 2*step}},
		{name: "stale standby", deleted: true, stale: true,
			wantTake: [2]time.Duration{podcertctl.DefaultLeaseDuration - step, podcertctl.DefaultLeaseDuration + 2*step}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newHAClock(t0)
			short := func(c *podcert.SignerConfig) { c.MaxLifetime = lifetime }
			cur := newRotationCA(t, "CA 1", clock.Now, t0.Add(-time.Hour), short)
			nxt := newRotationCA(t, "CA 2", clock.Now, t0.Add(-time.Hour), short)
			signsAt := t0.Add(2 * time.Minute)
			retireAt := signsAt.Add(lifetime + time.Minute)
			cs := fake.NewClientset()
			optimistic(cs)
			bw := watchBundle(cs, clock.Now)
			decided := make(chan podcertctl.Event, 4096)
			cfg := podcertctl.Config{Signer: cur.signer, CAKey: cur.key, APIVersion: podcertctl.V1, Resync: 1000 * time.Hour,
				Next:           &podcertctl.Rotation{Signer: nxt.signer, CAKey: nxt.key, SignsAt: signsAt, Propagation: time.Minute, Skew: time.Minute},
				LeaderElection: &podcertctl.LeaderElectionConfig{Namespace: "ksa"}}
			first := startReplica(t, cs, clock, decided, "first", cfg)
			clock.step(t, step, "first")
			require.True(t, first.ctl.Leading())
			standby := cfg
			if tc.stale {
				standby.Next = nil
			}
			second := startReplica(t, cs, clock, decided, "second", standby)
			clock.step(t, step, "first", "second")
			assert.Equal(t, pemOf(cur, nxt), bundleOf(t, cs).Spec.TrustBundle)
			leaf := issueOnce(t, cs, decided, "req-1")
			bw.issued(leaf)
			require.NoError(t, leaf.CheckSignatureFrom(cur.cert))

			// Into the overlap: the next CA signs.
			clock.step(t, signsAt.Sub(clock.Now())+step, "first", "second")
			leaf = issueOnce(t, cs, decided, "req-2")
			bw.issued(leaf)

			first.client.cut.Store(tc.deleted)
			first.stop()
			stopped := clock.Now()
			for !second.ctl.Leading() {
				require.Less(t, clock.Now().Sub(stopped), time.Minute, "the standby does not take over")
				clock.step(t, step, "second")
			}
			took := clock.Now().Sub(stopped)
			assert.GreaterOrEqual(t, took, tc.wantTake[0])
			assert.LessOrEqual(t, took, tc.wantTake[1])
			t.Logf("took over %s after the holder stopped", took)
			second.wait(t, podcertctl.LeaseAcquired)
			assert.Equal(t, pemOf(cur, nxt), bundleOf(t, cs).Spec.TrustBundle, "both CAs kept")

			leaf = issueOnce(t, cs, decided, "req-3")
			bw.issued(leaf)
			if tc.stale {
				require.NoError(t, leaf.CheckSignatureFrom(cur.cert), "the stale standby signs with its CA, kept published")
			} else {
				require.NoError(t, leaf.CheckSignatureFrom(nxt.cert), "the new holder signs with the next CA")
			}

			// To the retirement, in steps shorter than RenewDeadline.
			for !tc.stale && clock.Now().Before(retireAt.Add(step)) {
				clock.step(t, podcertctl.DefaultRenewDeadline-step, "second")
			}
			if !tc.stale {
				second.wait(t, podcertctl.CARetired)
				assert.Equal(t, pemOf(nxt), bundleOf(t, cs).Spec.TrustBundle, "the former CA retired by the new holder")
			}
			bw.mu.Lock()
			defer bw.mu.Unlock()
			assert.Empty(t, bw.stale, "every bundle written holds the CA of every live certificate")
			t.Logf("%d trust bundle writes, none stale", bw.writes)
		})
	}
}
