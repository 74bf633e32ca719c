package extsigner_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
)

// replica is one kube-apiserver of the HA control plane and the signer it
// signs through.
type replica struct {
	name   string
	client kubernetes.Interface
	url    string
	signer *ksaSigner
}

// minted is a token one replica issued, with when it was asked for.
type minted struct {
	token           string
	by              int
	asked, answered time.Time
}

// TestHASignersFollowOneRingFile: two kube-apiservers on one etcd, each
// with its own "ksa signer serve" reading the same ring file. A rotation
// written in the ring file a few seconds ahead happens on both at the
// same instant: the signers answer FetchKeys byte for byte alike before,
// during and after it, and both kube-apiservers serve the same documents;
// under load, every token minted by either passes TokenReview on both,
// and is signed with a key its signer publishes; one signer killed under
// load leaves its kube-apiserver validating, and minting resumes when it
// is back.
func TestHASignersFollowOneRingFile(t *testing.T) {
	controlplane.EachVersion(t, func(t *testing.T, version string) {
		bin := buildKSA(t, version)
		dir, err := os.MkdirTemp("", "ksa-ha-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		k1, k2 := testkeys.Generated("p256-ha-1"), testkeys.Generated("p256-ha-2")
		kid1, kid2 := mustKID(t, k1), mustKID(t, k2)
		f1, f2 := writeKeyFile(t, dir, "sa-1.key", k1), writeKeyFile(t, dir, "sa-2.key", k2)
		ring := filepath.Join(dir, "ring.yaml")
		start := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
		header := "refreshHint: 1s\nmaxTokenLifetime: 10m\nkeys:\n"
		first := fmt.Sprintf("- key: %s\n  primary: %q\n", f1, start.Format(time.RFC3339))
		require.NoError(t, os.WriteFile(ring, []byte(header+first), 0o600))

		args := []string{"--ring", ring, "--ring-check-interval", "200ms", "--log-level", "debug"}
		s1 := startKSASigner(t, bin, filepath.Join(dir, "1.sock"), args...)
		s2 := startKSASigner(t, bin, filepath.Join(dir, "2.sock"), args...)
		cp := controlplane.StartForTest(t, controlplane.Config{Version: version, SigningEndpoint: s1.sock})
		api2, err := cp.AddAPIServer(t.Context(), controlplane.APIServerConfig{SigningEndpoint: s2.sock})
		require.NoError(t, err)
		replicas := []*replica{{name: "kube-apiserver 1", client: cp.Clientset(), url: cp.URL, signer: s1}, {name: "kube-apiserver 2", client: api2.Clientset(), url: api2.URL, signer: s2}}
		ns := cp.Namespace(t)
		sa, pod := accountIn(t, cp.Clientset(), ns)

		// The key set each signer must answer at t: before the next key is
		// published, the first alone (its data timestamp its primary time);
		// from then on both, stamped with the publication.
		var published atomic.Int64 // Unix seconds; 0 until the rotation is written
		expect := func(at time.Time) ([]string, time.Time) {
			if p := published.Load(); p != 0 && !at.Before(time.Unix(p, 0)) {
				return []string{kid1, kid2}, time.Unix(p, 0).UTC()
			}
			return []string{kid1}, start
		}

		// A sampler compares the two signers' answers all along: byte for
		// byte alike, unless a transition came between the two calls, and
		// each what the ring file says for its moment.
		stopSampling := make(chan struct{})
		var samples, identical int
		var sampleErrs []string
		var down sync.Map // signers killed: not sampled
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				select {
				case <-stopSampling:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, ok := down.Load(s1); ok {
					continue
				}
				before := time.Now()
				r1, b1, err1 := s1.fetchKeys(t.Context())
				r2, b2, err2 := s2.fetchKeys(t.Context())
				after := time.Now()
				if err1 != nil || err2 != nil {
					if _, ok := down.Load(s1); !ok {
						sampleErrs = append(sampleErrs, fmt.Sprintf("FetchKeys: %v, %v", err1, err2))
					}
					continue
				}
				samples++
				kidsBefore, stampBefore := expect(before)
				kidsAfter, stampAfter := expect(after)
				transition := !slices.Equal(kidsBefore, kidsAfter) || !stampBefore.Equal(stampAfter)
				if bytes.Equal(b1, b2) {
					identical++
				} else if !transition {
					sampleErrs = append(sampleErrs, fmt.Sprintf("at %s the signers answer differently with no transition between", before.Format(time.RFC3339Nano)))
				}
				for i, r := range []*externaljwtv1.FetchKeysResponse{r1, r2} {
					kids, stamp := kidsOf(r.Keys), r.DataTimestamp.AsTime()
					if !(slices.Equal(kids, kidsBefore) && stamp.Equal(stampBefore)) && !(slices.Equal(kids, kidsAfter) && stamp.Equal(stampAfter)) {
						sampleErrs = append(sampleErrs, fmt.Sprintf("signer %d answers %v stamped %s at %s", i+1, kids, stamp, before.Format(time.RFC3339Nano)))
					}
				}
			}
		}()

		// Load: two callers per kube-apiserver mint tokens and review each
		// on both kube-apiservers.
		var mu sync.Mutex
		var tokens []minted
		var failures []string
		mintErrs := make([]int, len(replicas))
		stopLoad := make(chan struct{})
		var load sync.WaitGroup
		for i, r := range replicas {
			for range 2 {
				load.Go(func() {
					for {
						select {
						case <-stopLoad:
							return
						default:
						}
						asked := time.Now()
						ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
						tok, err := requestToken(ctx, r.client, ns, sa, pod)
						cancel()
						answered := time.Now()
						if err != nil {
							mu.Lock()
							mintErrs[i]++
							mu.Unlock()
							if _, killed := down.Load(r.signer); !killed {
								mu.Lock()
								failures = append(failures, fmt.Sprintf("%s failed to mint at %s: %v", r.name, asked.Format(time.RFC3339Nano), err))
								mu.Unlock()
							}
							select {
							case <-stopLoad:
								return
							case <-time.After(100 * time.Millisecond):
							}
							continue
						}
						kid := kidOf(t, tok)
						if resp, _, err := r.signer.fetchKeys(t.Context()); err == nil && !slices.Contains(kidsOf(resp.Keys), kid) {
							mu.Lock()
							failures = append(failures, fmt.Sprintf("%s minted a token signed with %s, which its signer does not publish", r.name, kid))
							mu.Unlock()
						}
						for _, other := range replicas {
							if st, err := reviewOn(t.Context(), other.client, tok); err != nil || !st.Authenticated {
								mu.Lock()
								failures = append(failures, fmt.Sprintf("a token of %s (kid %s) fails TokenReview on %s: %v %s", r.name, kid, other.name, err, st.Error))
								mu.Unlock()
							}
						}
						mu.Lock()
						tokens = append(tokens, minted{token: tok, by: i, asked: asked, answered: answered})
						mu.Unlock()
					}
				})
			}
		}
		count := func(pred func(minted) bool) int {
			mu.Lock()
			defer mu.Unlock()
			n := 0
			for _, m := range tokens {
				if pred(m) {
					n++
				}
			}
			return n
		}
		eventually(t, 30*time.Second, "both kube-apiservers mint", func() bool {
			return count(func(m minted) bool { return m.by == 0 }) > 0 && count(func(m minted) bool { return m.by == 1 }) > 0
		})
		sameServedDocuments(t, cp, replicas, k1)

		// The rotation, written a few seconds ahead: sa-2 published at T1,
		// signing from T2 (the ring's minimum staging, two refresh hints).
		t1 := time.Now().UTC().Truncate(time.Second).Add(4 * time.Second)
		t2 := t1.Add(2 * time.Second)
		published.Store(t1.Unix())
		retire := t2.Add(10*time.Minute + 2*time.Minute + time.Second)
		next := fmt.Sprintf("- key: %s\n  primary: %q\n  retired: %q\n- key: %s\n  published: %q\n  primary: %q\n",
			f1, start.Format(time.RFC3339), retire.Format(time.RFC3339), f2, t1.Format(time.RFC3339), t2.Format(time.RFC3339))
		require.NoError(t, os.WriteFile(ring+".tmp", []byte(header+next), 0o600))
		require.NoError(t, os.Rename(ring+".tmp", ring))

		eventually(t, 30*time.Second, "tokens signed with the next key, by both", func() bool {
			return count(func(m minted) bool { return m.by == 0 && m.asked.After(t2) }) > 2 && count(func(m minted) bool { return m.by == 1 && m.asked.After(t2) }) > 2
		})
		sameServedDocuments(t, cp, replicas, k1, k2)
		mu.Lock()
		for _, m := range tokens {
			kid := kidOf(t, m.token)
			switch {
			case m.answered.Before(t2):
				assert.Equal(t, kid1, kid, "a token minted before the switch")
			case m.asked.After(t2):
				assert.Equal(t, kid2, kid, "a token minted after the switch")
			}
		}
		mu.Unlock()

		// Signer 1 killed under load: kube-apiserver 1 cannot mint, still
		// validates (the load goes on reviewing on it), and mints again once
		// the signer is back.
		down.Store(s1, true)
		s1.kill()
		killedAt := time.Now()
		eventually(t, 30*time.Second, "kube-apiserver 2 mints while signer 1 is down, kube-apiserver 1 cannot", func() bool {
			mu.Lock()
			failed := mintErrs[0]
			mu.Unlock()
			return failed > 0 && count(func(m minted) bool { return m.by == 1 && m.asked.After(killedAt) }) > 3
		})
		restarted := time.Now()
		assert.Zero(t, count(func(m minted) bool { return m.by == 0 && m.asked.After(killedAt) && m.answered.Before(restarted) }), "no token without a signer")
		s1.start()
		back := time.Now()
		eventually(t, 60*time.Second, "kube-apiserver 1 mints again", func() bool {
			return count(func(m minted) bool { return m.by == 0 && m.asked.After(back) }) > 0
		})
		down.Delete(s1)

		close(stopLoad)
		load.Wait()
		close(stopSampling)
		<-sampled
		sameServedDocuments(t, cp, replicas, k1, k2)
		assert.Empty(t, failures)
		assert.Empty(t, sampleErrs)
		assert.Positive(t, samples)
		t.Logf("%d tokens minted and reviewed on both kube-apiservers; %d of %d samples of the signers' answers identical (the others straddled a transition)", len(tokens), identical, samples)
	})
}

// sameServedDocuments waits until both kube-apiservers serve ksa's
// rendering of the keys of signers (their refresh hint is a second: one
// may be a moment behind the other), and checks that they serve the same
// discovery document too.
func sameServedDocuments(t *testing.T, cp *controlplane.ControlPlane, replicas []*replica, signers ...crypto.Signer) {
	t.Helper()
	var keys []jwks.Key
	for _, s := range signers {
		k, err := jwks.NewKey(s.Public())
		require.NoError(t, err)
		keys = append(keys, k)
	}
	var served []string
	eventually(t, 30*time.Second, "both kube-apiservers serve the ring's keys", func() bool {
		served = served[:0]
		for _, r := range replicas {
			want, err := oidc.Render(oidc.IssuerConfig{Issuer: cp.Issuers[0], ExternalAddress: strings.TrimPrefix(r.url, "https://")}, keys)
			require.NoError(t, err)
			got := getDoc(t, cp, r.url, oidc.JWKSPath)
			if !bytes.Equal(want.JWKS, got) {
				return false
			}
			served = append(served, string(got))
		}
		return true
	})
	assert.Equal(t, served[0], served[1], "the same key set, byte for byte")
}

// getDoc GETs path from a kube-apiserver as the admin.
func getDoc(t *testing.T, cp *controlplane.ControlPlane, url, path string) []byte {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cp.CertPool, MinVersion: tls.VersionTLS12}}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+cp.AdminToken)
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	return body
}

// accountIn creates a service account and a pod using it in ns.
func accountIn(t *testing.T, cs kubernetes.Interface, ns string) (*corev1.ServiceAccount, *corev1.Pod) {
	t.Helper()
	sa, err := cs.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "billing"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	automount := false
	pod, err := cs.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "billing-0"},
		Spec: corev1.PodSpec{ServiceAccountName: sa.Name, AutomountServiceAccountToken: &automount,
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return sa, pod
}

// requestToken asks a kube-apiserver for a pod-bound token for vault, as
// long as the signer allows (ten minutes).
func requestToken(ctx context.Context, cs kubernetes.Interface, ns string, sa *corev1.ServiceAccount, pod *corev1.Pod) (string, error) {
	exp := int64(600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: []string{vault}, ExpirationSeconds: &exp,
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// reviewOn asks a kube-apiserver's TokenReview about a token for vault.
func reviewOn(ctx context.Context, cs kubernetes.Interface, token string) (authenticationv1.TokenReviewStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{vault}},
	}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.TokenReviewStatus{}, err
	}
	return out.Status, nil
}

func mustKID(t *testing.T, k crypto.Signer) string {
	t.Helper()
	kid, err := jwks.KeyID(k.Public())
	require.NoError(t, err)
	return kid
}

// kidsOf lists the key IDs of a FetchKeys answer.
func kidsOf(keys []*externaljwtv1.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.KeyId
	}
	return out
}

// kidsOfJWKS lists the key IDs of a key set document.
func kidsOfJWKS(t *testing.T, doc []byte) []string {
	t.Helper()
	set, err := jwks.ParseSet(doc, jwks.ParseOptions{})
	require.NoError(t, err)
	var kids []string
	for _, k := range set.Keys {
		kids = append(kids, k.KeyID)
	}
	return kids
}
