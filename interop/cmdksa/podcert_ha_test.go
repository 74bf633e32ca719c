package cmdksa

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// haReplica is one controller of the signer, as one pod would run it, with
// a client of its own whose Leases can be cut off (its pod deleted: it
// neither renews nor gives the Lease up).
type haReplica struct {
	ctl  *podcertctl.Controller
	cut  atomic.Bool
	stop func()
}

type haLeases struct {
	podcertctl.Leases
	cut *atomic.Bool
}

var errPodGone = errors.New("the pod is gone")

func (l haLeases) Get(ctx context.Context, name string, o metav1.GetOptions) (*coordinationv1.Lease, error) {
	if l.cut.Load() {
		return nil, errPodGone
	}
	return l.Leases.Get(ctx, name, o)
}

func (l haLeases) Update(ctx context.Context, le *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if l.cut.Load() {
		return nil, errPodGone
	}
	return l.Leases.Update(ctx, le, o)
}

type haClient struct {
	*podcertctl.RESTClient
	cut *atomic.Bool
}

func (c haClient) Leases(ns string) podcertctl.Leases {
	return haLeases{c.RESTClient.Leases(ns), c.cut}
}

// TestPodCertificateSignerHA runs two controllers of one signer (the
// library's podcertctl, as two replicas of "ksa podcert serve" run it),
// each with its own client holding the RBAC "ksa podcert rbac" prints,
// with leader election, against kube-apiserver 1.37, through a CA
// rotation: both decide a burst of requests (the conflicts counted), one
// alone publishes; the Lease's holder is cut off mid-rotation, its pod
// deleted, and the other takes over once the Lease expires and keeps
// issuing with the next CA. Every version of the ClusterTrustBundle seen
// holds the CA of every certificate issued before it and still valid.
func TestPodCertificateSignerHA(t *testing.T) {
	eachVersion(t, func(t *testing.T, version, bin, work string) {
		if version != "v1.37.2" {
			t.Skip("proven on 1.37.2 alone: the controller's v1beta1 path is that of TestPodCertificateSigner")
		}
		cp := controlplane.StartForTest(t, controlplane.Config{Version: version, EnableAdmissionPlugins: []string{"NodeRestriction"}})
		signerNS := cp.Namespace(t)
		rbac, code := ksa(t, bin, work, "podcert", "rbac", "--signer-name", podSigner, "--namespace", signerNS, "--service-account", "podcert-signer", "--no-namespace")
		require.Equal(t, 0, code)
		applyRBAC(t, cp.Clientset(), rbac)
		pcrs := pcrAPI{cs: cp.Clientset(), v1: true}
		rc, err := clientcmd.BuildConfigFromFlags("", saKubeconfig(t, cp, signerNS, "podcert-signer", work))
		require.NoError(t, err)
		rc.QPS, rc.Burst = 200, 400

		curCA, curKey := podCA(t)
		nextCA, nextKey := podCA(t)
		signer := func(ca *x509.Certificate, key *ecdsa.PrivateKey) *podcert.Signer {
			s, err := podcert.NewSigner(podcert.SignerConfig{SignerName: podSigner, Key: key, Chain: []*x509.Certificate{ca}, MaxLifetime: time.Hour})
			require.NoError(t, err)
			return s
		}
		signsAt := time.Now().Add(20 * time.Second)
		le := podcertctl.LeaderElectionConfig{Namespace: signerNS, LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}
		start := func(name string) *haReplica {
			r := &haReplica{}
			client, err := podcertctl.NewRESTClient(rc)
			require.NoError(t, err)
			l := le
			l.Identity = name
			r.ctl, err = podcertctl.New(podcertctl.Config{Client: haClient{client, &r.cut}, Signer: signer(curCA, curKey), CAKey: curKey,
				Next:           &podcertctl.Rotation{Signer: signer(nextCA, nextKey), CAKey: nextKey, SignsAt: signsAt, Propagation: 10 * time.Second},
				LeaderElection: &l, Log: slog.New(slog.NewTextHandler(logTo{t, name}, &slog.HandlerOptions{Level: slog.LevelInfo}))})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- r.ctl.Run(ctx) }()
			var once sync.Once
			r.stop = func() { once.Do(func() { cancel(); require.NoError(t, <-done) }) }
			t.Cleanup(r.stop)
			return r
		}

		// Every version of the bundle, read every 20ms as a kubelet would.
		type seen struct {
			at  time.Time
			pem string
		}
		var mu sync.Mutex
		var bundles []seen
		bundleName := podcertctl.DefaultTrustBundleName(podSigner)
		wctx, stopWatch := context.WithCancel(t.Context())
		defer stopWatch()
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			last := ""
			_ = wait.PollUntilContextCancel(wctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				tb, err := cp.Clientset().CertificatesV1().ClusterTrustBundles().Get(ctx, bundleName, metav1.GetOptions{})
				if err != nil || tb.ResourceVersion == last {
					return false, nil
				}
				last = tb.ResourceVersion
				mu.Lock()
				bundles = append(bundles, seen{time.Now(), tb.Spec.TrustBundle})
				mu.Unlock()
				return false, nil
			})
		}()

		a, b := start("replica-a"), start("replica-b")
		var holder, standby *haReplica
		require.NoError(t, wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			switch {
			case a.ctl.Leading() && !b.ctl.Leading():
				holder, standby = a, b
			case b.ctl.Leading() && !a.ctl.Leading():
				holder, standby = b, a
			}
			return holder != nil, nil
		}))

		node := newNode(t, cp)
		ns := cp.Namespace(t)
		pod := newPod(t, cp, ns, "cart", node)
		type leaf struct {
			at   time.Time
			cert *x509.Certificate
		}
		var leaves []leaf
		total := 0
		burst := func(n int) {
			t.Helper()
			for range n {
				pcrs.create(t, node, pod, stubCSR(t, newKey(t), ""), nil)
			}
			total += n
			outcomes, err := pcrs.waitAll(t, ns, total)
			require.NoError(t, err)
			for name, o := range outcomes {
				require.Equal(t, podcert.Issued, o, name)
			}
			list, err := cp.Clientset().CertificatesV1().PodCertificateRequests(ns).List(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			leaves = leaves[:0]
			for _, p := range list.Items {
				leaves = append(leaves, leaf{p.Status.NotBefore.Time, firstCert(t, p.Status.CertificateChain)})
			}
		}

		// Both replicas ready, whichever leads; both decide the burst.
		require.NoError(t, wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			return a.ctl.Ready(ctx) == nil && b.ctl.Ready(ctx) == nil, nil
		}))
		burst(100)
		sa, sb := a.ctl.Stats(), b.ctl.Stats()
		assert.Equal(t, int64(100), sa.Issued+sb.Issued, "each request issued once")
		t.Logf("burst of 100 with two replicas: issued by a %d, by b %d; conflicts %d (a %d, b %d)",
			sa.Issued, sb.Issued, sa.Conflicts+sb.Conflicts, sa.Conflicts, sb.Conflicts)

		// Into the overlap: the next CA signs.
		require.NoError(t, wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return time.Now().After(signsAt.Add(2*time.Second)) && holder.ctl.CAs()[0].Subject == nextCA.Subject.String() &&
				standby.ctl.CAs()[0].Subject == nextCA.Subject.String(), nil
		}))
		burst(10)

		// The holder's pod deleted mid-rotation: no renewal, no release.
		holder.cut.Store(true)
		holder.stop()
		stopped := time.Now()
		require.NoError(t, wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return standby.ctl.Leading(), nil
		}))
		took := time.Since(stopped)
		assert.GreaterOrEqual(t, took, le.LeaseDuration-le.RetryPeriod, "not before the Lease expired")
		t.Logf("the standby took over %s after the holder's pod was deleted (LeaseDuration %s)", took.Round(10*time.Millisecond), le.LeaseDuration)
		before := standby.ctl.Stats().Issued
		burst(20)
		assert.Equal(t, before+20, standby.ctl.Stats().Issued, "the survivor issues every request")
		bundleNow := pcrs.trustBundle(t)
		assert.Equal(t, pemBlock("CERTIFICATE", curCA.Raw)+pemBlock("CERTIFICATE", nextCA.Raw), bundleNow, "both CAs kept in the overlap")

		stopWatch()
		<-watched
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, bundles)
		stale := 0
		for _, bv := range bundles {
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM([]byte(bv.pem))
			for _, l := range leaves {
				if l.at.After(bv.at) || bv.at.After(l.cert.NotAfter) {
					continue
				}
				if _, err := l.cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: bv.at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
					stale++
				}
			}
		}
		assert.Zero(t, stale, "a bundle version lacked the CA of a live certificate")
		t.Logf("%d certificates, %d versions of the bundle seen, none lacking a live CA", len(leaves), len(bundles))
	})
}

// logTo writes a replica's log lines to the test's log.
type logTo struct {
	t    *testing.T
	name string
}

func (l logTo) Write(p []byte) (int, error) {
	l.t.Logf("%s: %s", l.name, strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
