package cmdksa

import (
	"context"
	"crypto"
	"crypto/x509"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// Issuance benchmark: a burst of issuanceBurst requests, created by the
// node issuanceCreators at a time.
const (
	issuanceBurst    = 500
	issuanceCreators = 8
	// issuanceRounds is how often the deciders take turns in one run.
	issuanceRounds = 2
	// serveQPS and serveBurst are the client limits "ksa podcert serve"
	// runs with by default (--kube-api-qps, --kube-api-burst).
	serveQPS   = 50
	serveBurst = 100
)

// BenchmarkPodCertIssuance measures pod-certificate issuance on a real
// kube-apiserver (1.37.2): each op is a burst of issuanceBurst
// PodCertificateRequests created as the node, timed until every one is
// Issued, for these deciders, taking turns issuanceRounds times in one run
// so that the machine's load weighs on all alike (-count repeats each in
// its turn):
//
//   - floor: a decider that signs nothing: it writes, for each request, the
//     status of one certificate chain computed beforehand (every request
//     has the same key), with as many workers as the controller and no
//     client rate limit: the API server's status writes alone;
//   - replicas-1: podcertctl, one controller, as "ksa podcert serve" runs
//     it (its client limits, its default workers);
//   - replicas-2: two controllers with leader election, each with a client
//     of its own, as two replicas run; conflicts/op counts the status
//     writes one lost to the other;
//   - replicas-1-unlimited, replicas-2-unlimited: the same without a client
//     rate limit, as the floor: what the controller does when the limits
//     of "ksa podcert serve" do not hold it back.
//
// Each reports requests/s (the burst over the time from its first create
// to its last Issued) and p99-ms, the 99th percentile of the time from a
// request's create to its Issued status as a watcher sees it. Run it with
//
//	go test -run '^$' -bench PodCertIssuance -benchtime 1x -count 2 ./cmdksa/
//
// ns/op is the time of one burst, its setup left out.
func BenchmarkPodCertIssuance(b *testing.B) {
	if _, _, err := controlplane.Binaries("v1.37.2"); err != nil {
		controlplane.StartForTest(b, controlplane.Config{Version: "v1.37.2"}) // skips, or fails in CI, saying how to install
	}
	cp := controlplane.StartForTest(b, controlplane.Config{Version: "v1.37.2", EnableAdmissionPlugins: []string{"NodeRestriction"}})
	signerNS := cp.Namespace(b)
	rbac, err := podcertctl.Manifests(podcertctl.RBACConfig{SignerName: podSigner, Namespace: signerNS, ServiceAccount: "podcert-signer", OmitNamespace: true})
	require.NoError(b, err)
	applyRBAC(b, cp.Clientset(), string(rbac))
	rc, err := clientcmd.BuildConfigFromFlags("", saKubeconfig(b, cp, signerNS, "podcert-signer", b.TempDir()))
	require.NoError(b, err)

	ca, caKey := podCA(b)
	signer, err := podcert.NewSigner(podcert.SignerConfig{SignerName: podSigner, Key: caKey, Chain: []*x509.Certificate{ca}, MaxLifetime: time.Hour})
	require.NoError(b, err)
	// Publish the bundle once: every decider then finds it.
	publish, err := podcertctl.NewRESTClient(serveConfig(rc))
	require.NoError(b, err)
	ctl, err := podcertctl.New(podcertctl.Config{Client: publish, Signer: signer, CAKey: caKey})
	require.NoError(b, err)
	runUntilReady(b, ctl)()

	node := newNode(b, cp)
	ns := cp.Namespace(b)
	pod := newPod(b, cp, ns, "cart", node)
	csr := stubCSR(b, newKey(b), "")
	pcrs := pcrAPI{cs: cp.Clientset(), v1: true}

	deciders := []struct {
		name  string
		start func(b *testing.B) (stop func() podcertctl.Stats)
	}{
		{name: "floor", start: func(b *testing.B) func() podcertctl.Stats { return startFloor(b, rc, signer) }},
		{name: "replicas-1", start: func(b *testing.B) func() podcertctl.Stats {
			return startReplicas(b, rc, signer, caKey, 1, signerNS, true)
		}},
		{name: "replicas-2", start: func(b *testing.B) func() podcertctl.Stats {
			return startReplicas(b, rc, signer, caKey, 2, signerNS, true)
		}},
		{name: "replicas-1-unlimited", start: func(b *testing.B) func() podcertctl.Stats {
			return startReplicas(b, rc, signer, caKey, 1, signerNS, false)
		}},
		{name: "replicas-2-unlimited", start: func(b *testing.B) func() podcertctl.Stats {
			return startReplicas(b, rc, signer, caKey, 2, signerNS, false)
		}},
	}
	for range issuanceRounds {
		for _, d := range deciders {
			b.Run(d.name, func(b *testing.B) {
				b.StopTimer()
				stop := d.start(b)
				var lat []time.Duration
				var took time.Duration
				for range b.N {
					l, el := issuanceBurstOnce(b, pcrs, node, pod, csr)
					lat, took = append(lat, l...), took+el
				}
				b.StopTimer()
				stats := stop()
				slices.Sort(lat)
				b.ReportMetric(float64(len(lat))/took.Seconds(), "requests/s")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(stats.Conflicts)/float64(b.N), "conflicts/op")
			})
		}
	}
}

// serveConfig is rc with the client limits of "ksa podcert serve".
func serveConfig(rc *rest.Config) *rest.Config {
	c := rest.CopyConfig(rc)
	c.QPS, c.Burst = serveQPS, serveBurst
	return c
}

// unlimited is rc without a client rate limit.
func unlimited(rc *rest.Config) *rest.Config {
	c := rest.CopyConfig(rc)
	c.QPS, c.Burst = -1, 0
	return c
}

// runUntilReady runs ctl until it is ready; the function returned stops
// it and returns once Run has.
func runUntilReady(b testing.TB, ctl *podcertctl.Controller) (stop func()) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); require.NoError(b, <-done) }) }
	b.Cleanup(stop)
	require.NoError(b, wait.PollUntilContextTimeout(b.Context(), 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return ctl.Ready(ctx) == nil, nil
	}))
	return stop
}

// startReplicas runs n controllers of signer, each with a client of its
// own; with n > 1 they elect a Lease holder.
func startReplicas(b *testing.B, rc *rest.Config, signer *podcert.Signer, caKey crypto.Signer, n int, signerNS string, limited bool) func() podcertctl.Stats {
	b.Helper()
	ctls := make([]*podcertctl.Controller, n)
	stops := make([]func(), n)
	for i := range n {
		c := unlimited(rc)
		if limited {
			c = serveConfig(rc)
		}
		client, err := podcertctl.NewRESTClient(c)
		require.NoError(b, err)
		cfg := podcertctl.Config{Client: client, Signer: signer, CAKey: caKey}
		if n > 1 {
			cfg.LeaderElection = &podcertctl.LeaderElectionConfig{Namespace: signerNS, Identity: fmt.Sprintf("replica-%d", i)}
		}
		ctls[i], err = podcertctl.New(cfg)
		require.NoError(b, err)
		stops[i] = runUntilReady(b, ctls[i])
	}
	return func() podcertctl.Stats {
		var sum podcertctl.Stats
		for i, c := range ctls {
			stops[i]()
			s := c.Stats()
			sum.Issued += s.Issued
			sum.Conflicts += s.Conflicts
		}
		return sum
	}
}

// startFloor runs the floor decider: an informer of the signer's
// requests and DefaultWorkers workers writing, to each request not yet
// decided, the status of one chain signed beforehand, through a client
// without a rate limit.
func startFloor(b *testing.B, rc *rest.Config, signer *podcert.Signer) func() podcertctl.Stats {
	b.Helper()
	cs, err := kubernetes.NewForConfig(unlimited(rc))
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	todo := make(chan *certificatesv1.PodCertificateRequest, issuanceBurst)
	f := informers.NewSharedInformerFactory(cs, 0)
	inf := f.Certificates().V1().PodCertificateRequests().Informer()
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if p, ok := obj.(*certificatesv1.PodCertificateRequest); ok && p.Spec.SignerName == podSigner && len(p.Status.Conditions) == 0 {
			todo <- p
		}
	}})
	require.NoError(b, err)
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	var (
		once     sync.Once
		decision podcert.Decision
		errs     atomic.Int64
		wg       sync.WaitGroup
	)
	for range podcertctl.DefaultWorkers {
		wg.Go(func() {
			for {
				var p *certificatesv1.PodCertificateRequest
				select {
				case <-ctx.Done():
					return
				case p = <-todo:
				}

				once.Do(func() {
					req, _ := kubeapi.PodCertRequest(p)
					var err error
					decision, err = signer.Decide(&req)
					if err != nil || decision.Outcome != podcert.Issued {
						b.Errorf("the floor's one decision: %v %v", decision.Outcome, err)
					}
				})
				p = p.DeepCopy()
				if err := kubeapi.ApplyPodCertDecision(&decision, p); err != nil {
					b.Error(err)
					continue
				}
				if _, err := cs.CertificatesV1().PodCertificateRequests(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
					errs.Add(1)
					b.Errorf("floor: writing the status of %s: %v", p.Name, err)
				}
			}
		})
	}
	return func() podcertctl.Stats {
		cancel()
		wg.Wait()
		return podcertctl.Stats{Errors: errs.Load()}
	}
}

// issuanceBurstOnce creates issuanceBurst requests as the node,
// issuanceCreators at a time, and returns, once every one is Issued, the
// time from each one's create to its Issued status as a watcher sees it,
// and the time from the first create to the last Issued.
func issuanceBurstOnce(b *testing.B, pcrs pcrAPI, node nodeClient, pod *corev1.Pod, csr []byte) ([]time.Duration, time.Duration) {
	b.Helper()
	b.StopTimer()
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	var mu sync.Mutex
	issued := map[string]time.Time{}
	all := make(chan struct{})
	seen := func(obj any) {
		p, ok := obj.(*certificatesv1.PodCertificateRequest)
		if !ok {
			return
		}
		if _, st := kubeapi.PodCertRequest(p); st.Outcome() != podcert.Issued {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if _, ok := issued[p.Name]; !ok {
			issued[p.Name] = now
			if len(issued) == issuanceBurst {
				close(all)
			}
		}
	}
	f := informers.NewSharedInformerFactoryWithOptions(pcrs.cs, 0, informers.WithNamespace(pod.Namespace))
	inf := f.Certificates().V1().PodCertificateRequests().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }})
	require.NoError(b, err)
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	defer func() {
		cancel()
		f.Shutdown()
	}()

	created := make([]struct {
		name string
		at   time.Time
	}, issuanceBurst)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.StartTimer()
	start := time.Now()
	for range issuanceCreators {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < issuanceBurst; i = int(next.Add(1)) - 1 {
				at := time.Now()
				name, err := pcrs.tryCreate(b, node, pod, csr, nil)
				if err != nil {
					b.Error(err)
					return
				}
				created[i].name, created[i].at = name, at
			}
		})
	}
	wg.Wait()
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		b.Fatal("not every request was Issued within five minutes")
	}
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	var last time.Time
	lat := make([]time.Duration, 0, issuanceBurst)
	for _, c := range created {
		at, ok := issued[c.name]
		require.True(b, ok, c.name)
		lat = append(lat, at.Sub(c.at))
		if at.After(last) {
			last = at
		}
	}
	require.NoError(b, pcrs.cs.CertificatesV1().PodCertificateRequests(pod.Namespace).DeleteCollection(b.Context(), metav1.DeleteOptions{}, metav1.ListOptions{}))
	b.StartTimer()
	return lat, last.Sub(start)
}
