package cmdksa

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/podcert"
)

// TestPodCertificateCARotation rotates the CA of "ksa podcert serve" on
// real kube-apiservers (1.37, and 1.36 with the gates) while two pods do
// mutual TLS without pause, and counts the failed handshakes: there must
// be none.
//
// The signer starts with the next CA due to sign 20 seconds later; the
// one-hour default minimum between publishing a CA and its first
// certificate is lowered for the test with --ca-propagation 10s, passed
// explicitly. The test plays the kubelet: it copies the published
// ClusterTrustBundle into each pod's trust file (podcert.TrustFile) and
// keeps renewing both pods' certificates through new
// PodCertificateRequests created with the node's credentials, writing
// each credential bundle in the kubelet's layout (podcert.Source). The
// signer is stopped and started again with the same flags once the next
// CA signs, as an operator's restart mid-rotation would.
//
// The former CA leaves the bundle at --next-ca-signs-at + --max-lifetime
// + 5 minutes: at least 1h05m later, since kube-apiserver accepts no
// certificate shorter than an hour. That cannot happen in real time here,
// so the retirement is driven by a last restart with the same flags under
// a clock past it (the hidden --now flag): the phase is a function of the
// flags and the time alone, so that start publishes the next CA alone, as
// the long-running signer would have at that moment. Under that clock the
// signer could not issue (kube-apiserver wants notBefore within 5 minutes
// of its own time), so no request is made in that phase: the pods keep
// their certificates of the next CA, and the handshakes go on with the
// trust files reduced to it.
func TestPodCertificateCARotation(t *testing.T) {
	eachVersion(t, func(t *testing.T, version, bin, work string) {
		oldCA, oldCAKey := podCA(t)
		newCA, newCAKey := podCA(t)
		for name, ca := range map[string]struct {
			cert *x509.Certificate
			key  any
		}{"ca": {oldCA, oldCAKey}, "ca2": {newCA, newCAKey}} {
			writePEM(t, filepath.Join(work, name+".crt"), "CERTIFICATE", ca.cert.Raw)
			der, err := x509.MarshalPKCS8PrivateKey(ca.key)
			require.NoError(t, err)
			writePEM(t, filepath.Join(work, name+".key"), "PRIVATE KEY", der)
		}

		cp, pcrs, kubeconfig := podcertPlane(t, version, bin, work)

		signsAt := time.Now().Add(20 * time.Second).Truncate(time.Second)
		retireAt := signsAt.Add(time.Hour + 5*time.Minute)
		args := []string{"serve", "--signer-name", podSigner, "--ca-key", "ca.key", "--ca-cert", "ca.crt",
			"--next-ca-key", "ca2.key", "--next-ca-cert", "ca2.crt", "--next-ca-signs-at", signsAt.UTC().Format(time.RFC3339),
			"--ca-propagation", "10s", "--max-lifetime", "1h", "--allow-host", "{serviceaccount}.{namespace}.svc", "--kubeconfig", kubeconfig}
		stopSigner, signerOutput := startSigner(t, bin, work, args...)

		node := newNode(t, cp)
		ns := cp.Namespace(t)
		cart := newPod(t, cp, ns, "cart", node)
		checkout := newPod(t, cp, ns, "checkout", node)
		host := "checkout." + ns + ".svc"

		// The kubelet's side: the trust file and the credential bundles.
		trustPath := filepath.Join(work, "trust.pem")
		syncTrust := func() string {
			t.Helper()
			var bundle string
			require.NoError(t, wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				b, labels, err := pcrs.bundle(ctx)
				if err != nil {
					return false, nil
				}
				assert.Equal(t, map[string]string{"ksa-go.github.io/canarying": "live", "ksa-go.github.io/trust-domain": "cluster.local"}, labels)
				bundle = b
				return true, nil
			}))
			writeAtomic(t, trustPath, []byte(bundle))
			return bundle
		}
		renew := func(pod *corev1.Pod, annotations map[string]string) *x509.Certificate {
			t.Helper()
			key := newKey(t)
			name := pcrs.create(t, node, pod, stubCSR(t, key, ""), annotations)
			var st podcert.Status
			require.NoError(t, wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				var err error
				st, err = pcrs.status(ctx, ns, name)
				return err == nil && st.Outcome() != 0, nil
			}))
			require.Equal(t, podcert.Issued, st.Outcome(), "%+v", st.Conditions)
			der, err := x509.MarshalPKCS8PrivateKey(key)
			require.NoError(t, err)
			var b strings.Builder
			b.WriteString(pemBlock("PRIVATE KEY", der))
			b.WriteString(st.CertificateChain)
			writeAtomic(t, filepath.Join(work, pod.Name+"-credentialbundle.pem"), []byte(b.String()))
			return firstCert(t, st.CertificateChain)
		}
		byNew := func(c *x509.Certificate) bool { return c.CheckSignatureFrom(newCA) == nil }

		bundle := syncTrust()
		assert.Equal(t, pemBlock("CERTIFICATE", oldCA.Raw)+pemBlock("CERTIFICATE", newCA.Raw), bundle, "both CAs from the start, the current first")
		require.False(t, byNew(renew(cart, nil)), "the current CA signs before --next-ca-signs-at")
		require.False(t, byNew(renew(checkout, map[string]string{podcert.DefaultServeHostsKey: host})))

		hs := startHandshakes(t, work, trustPath, host, newCA)

		// Renew both pods' certificates without pause until the next CA
		// signs them, and a while after.
		renewUntil := func(done func() bool) {
			for !done() {
				syncTrust()
				renew(cart, nil)
				renew(checkout, map[string]string{podcert.DefaultServeHostsKey: host})
			}
		}
		renewUntil(func() bool { return time.Now().After(signsAt.Add(3 * time.Second)) })
		require.True(t, byNew(renew(cart, nil)), "the next CA signs from --next-ca-signs-at")
		require.True(t, byNew(renew(checkout, map[string]string{podcert.DefaultServeHostsKey: host})))
		assert.Contains(t, signerOutput(), "the next CA signs from now")
		hs.waitFor(t, 20)

		// Started again mid-rotation with the same flags: the next CA
		// signs, both stay published.
		stopSigner()
		stopSigner, signerOutput = startSigner(t, bin, work, args...)
		require.True(t, byNew(renew(cart, nil)), "a restart in the overlap signs with the next CA")
		assert.Contains(t, signerOutput(), "rotating the CA")
		require.True(t, byNew(renew(checkout, map[string]string{podcert.DefaultServeHostsKey: host})))
		assert.Equal(t, bundle, syncTrust(), "both CAs stay published until the retirement")
		hs.waitFor(t, 20)

		// The retirement, under a clock past it (see above).
		stopSigner()
		stopSigner, signerOutput = startSigner(t, bin, work, append(args, "--now", retireAt.Add(time.Minute).UTC().Format(time.RFC3339))...)
		require.NoError(t, wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			b, _, err := pcrs.bundle(ctx)
			return err == nil && b == pemBlock("CERTIFICATE", newCA.Raw), nil
		}), "the former CA leaves the bundle: %s", lastLines(signerOutput(), 10))
		syncTrust()
		hs.waitFor(t, 20)
		stopSigner()

		stats := hs.stop(t)
		t.Logf("%s: %d handshakes, %d of them with both pods' certificates from the next CA", version, stats.ok, stats.bothNew)
		assert.Empty(t, stats.failed, "failed handshakes")
		assert.Positive(t, stats.bothOld, "handshakes with the former CA's certificates")
		assert.Positive(t, stats.bothNew, "handshakes with the next CA's certificates")

		// The trust files now refuse the former CA's certificates.
		trust, err := podcert.NewTrustFile(podcert.TrustFileConfig{Path: trustPath})
		require.NoError(t, err)
		assert.False(t, trust.Current().Contains(oldCA))
		assert.True(t, trust.Current().Contains(newCA))
	})
}

// status reads a request's status.
func (a pcrAPI) status(ctx context.Context, ns, name string) (podcert.Status, error) {
	if a.v1 {
		p, err := a.cs.CertificatesV1().PodCertificateRequests(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return podcert.Status{}, err
		}
		_, st := kubeapi.PodCertRequest(p)
		return st, nil
	}
	p, err := a.cs.CertificatesV1beta1().PodCertificateRequests(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return podcert.Status{}, err
	}
	_, st := kubeapi.PodCertRequestV1beta1(p)
	return st, nil
}

// bundle reads the published ClusterTrustBundle: its certificates and
// labels.
func (a pcrAPI) bundle(ctx context.Context) (string, map[string]string, error) {
	name := strings.ReplaceAll(podSigner, "/", ":") + ":primary-bundle"
	if a.v1 {
		b, err := a.cs.CertificatesV1().ClusterTrustBundles().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", nil, err
		}
		return b.Spec.TrustBundle, b.Labels, nil
	}
	b, err := a.cs.CertificatesV1beta1().ClusterTrustBundles().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", nil, err
	}
	return b.Spec.TrustBundle, b.Labels, nil
}

// writeAtomic replaces a file in one rename, as the kubelet swaps a
// projected volume's files.
func writeAtomic(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// handshakes runs mutual TLS between the cart pod (client) and the
// checkout pod (server) in a loop, each with its credential bundle file
// (podcert.Source) and the trust file (podcert.TrustFile), both followed
// as they are replaced.
type handshakes struct {
	mu               sync.Mutex
	ok               int
	bothOld, bothNew int
	failed           []error
	progress         chan struct{}
	stopped          chan struct{}
	quit             context.CancelFunc
}

type handshakeStats struct {
	ok, bothOld, bothNew int
	failed               []error
}

func startHandshakes(t *testing.T, dir, trustPath, host string, newCA *x509.Certificate) *handshakes {
	t.Helper()
	trust, err := podcert.NewTrustFile(podcert.TrustFileConfig{Path: trustPath})
	require.NoError(t, err)
	peers, err := podcert.NewPeers(podcert.PeerConfig{TrustFile: trust, TrustDomain: podcert.DefaultTrustDomain})
	require.NoError(t, err)
	source := func(name string) *podcert.Source {
		src, err := podcert.NewSource(podcert.SourceConfig{BundlePath: filepath.Join(dir, name+"-credentialbundle.pem")})
		require.NoError(t, err)
		return src
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", peers.ServerConfig(source("checkout"), nil))
	require.NoError(t, err)
	clientCfg := peers.ClientConfig(source("cart"), nil)
	clientCfg.ServerName = host
	ctx, cancel := context.WithCancel(context.Background())
	h := &handshakes{progress: make(chan struct{}, 1), stopped: make(chan struct{}), quit: cancel}
	fail := func(err error) {
		h.mu.Lock()
		h.failed = append(h.failed, err)
		h.mu.Unlock()
	}
	// The server: each connection's handshake, then a byte that tells the
	// client its certificate was accepted.
	var served sync.WaitGroup
	served.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			served.Go(func() {
				defer c.Close()
				if err := c.(*tls.Conn).Handshake(); err != nil {
					fail(fmt.Errorf("server: %w", err))
					return
				}
				_, _ = c.Write([]byte{1})
			})
		}
	})
	go func() {
		defer close(h.stopped)
		defer served.Wait()
		defer l.Close()
		for ctx.Err() == nil {
			c, err := tls.Dial("tcp", l.Addr().String(), clientCfg)
			if err != nil {
				fail(fmt.Errorf("client: %w", err))
				continue
			}
			var b [1]byte
			_, err = io.ReadFull(c, b[:])
			st := c.ConnectionState()
			c.Close()
			if err != nil {
				fail(fmt.Errorf("client: reading the server's byte: %w", err))
				continue
			}
			serverNew := st.PeerCertificates[0].CheckSignatureFrom(newCA) == nil
			cred, err := clientCfg.GetClientCertificate(nil)
			if err != nil {
				fail(err)
				continue
			}
			clientNew := cred.Leaf.CheckSignatureFrom(newCA) == nil
			h.mu.Lock()
			h.ok++
			switch {
			case serverNew && clientNew:
				h.bothNew++
			case !serverNew && !clientNew:
				h.bothOld++
			}
			h.mu.Unlock()
			select {
			case h.progress <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() { h.stop(t) })
	return h
}

// waitFor returns once n more handshakes succeeded (failures are counted,
// not waited for).
func (h *handshakes) waitFor(t *testing.T, n int) {
	t.Helper()
	h.mu.Lock()
	want := h.ok + n
	h.mu.Unlock()
	for {
		select {
		case <-h.progress:
		case <-time.After(time.Minute):
			t.Fatal("no handshake progress")
		}
		h.mu.Lock()
		ok := h.ok
		h.mu.Unlock()
		if ok >= want {
			return
		}
	}
}

// stop ends the loop and returns its counts.
func (h *handshakes) stop(t *testing.T) handshakeStats {
	h.quit()
	<-h.stopped
	h.mu.Lock()
	defer h.mu.Unlock()
	return handshakeStats{ok: h.ok, bothOld: h.bothOld, bothNew: h.bothNew, failed: append([]error(nil), h.failed...)}
}

// pemBlock encodes one PEM block.
func pemBlock(typ string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}
