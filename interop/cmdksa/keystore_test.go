package cmdksa

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ksaid "github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner/signertest"
	"github.com/ksa-go/ksa/interop/clientgo"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/keystoretest"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

// storeKey makes a key in a key store with "ksa issuer keygen" and returns
// its reference and its published key, read from the public key file
// keygen wrote.
func storeKey(t testing.TB, bin, work, out string, args ...string) (string, jwks.Key) {
	t.Helper()
	stdout, code := ksa(t, bin, work, append([]string{"issuer", "keygen", "--out", out, "--public-out", "sa.pub", "-o", "json"}, args...)...)
	require.Equal(t, 0, code, stdout)
	var res struct {
		KeyRef string `json:"key_ref"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
	pubs, err := keystore.LoadPublicKeysFile(filepath.Join(work, "sa.pub"))
	require.NoError(t, err)
	key, err := jwks.NewKey(pubs[0])
	require.NoError(t, err)
	return res.KeyRef, key
}

// startKeySigner runs "ksa signer serve" on sock with the key ref names,
// until the test ends, and returns once it listens.
func startKeySigner(t testing.TB, bin, work, sock, ref string) {
	t.Helper()
	cmd := exec.Command(bin, "signer", "serve", "--socket", sock, "--key", ref)
	cmd.Dir = work
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var (
		mu  sync.Mutex
		log strings.Builder
	)
	started := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if !sent && strings.Contains(sc.Text(), " msg=serving ") {
				started <- true
				sent = true
			}
		}
		if !sent {
			started <- false
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.NoError(t, err, "ksa signer serve:\n%s", log.String())
	})
	// A signer that neither starts nor exits is stopped after a minute, so
	// that the test fails with its log instead of hanging.
	ok := false
	select {
	case ok = <-started:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
	}
	if !ok {
		_ = cmd.Wait()
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("ksa signer serve did not start:\n%s", log.String())
	}
}

// TestSignerServeKeyStores: real kube-apiservers sign through "ksa signer
// serve" with the key in SoftHSM2 (as an HSM) and in local-kms (as AWS
// KMS), each made by "ksa issuer keygen": the signer passes the
// conformance harness, TokenRequest tokens carry the key's kid and pass
// TokenReview and ksa's validator as the same user, and kube-apiserver's
// discovery document and key set are byte for byte ksa's rendering of the
// public key keygen wrote.
func TestSignerServeKeyStores(t *testing.T) {
	for _, store := range []struct {
		name string
		key  func(t *testing.T, bin, work string) (string, jwks.Key)
	}{
		{name: "SoftHSM2", key: func(t *testing.T, bin, work string) (string, jwks.Key) {
			hsm := keystoretest.StartSoftHSM(t)
			return storeKey(t, bin, work, hsm.Ref("0a01", "service-accounts"), "--type", "ecdsa")
		}},
		{name: "local-kms", key: func(t *testing.T, bin, work string) (string, jwks.Key) {
			keystoretest.StartLocalKMS(t)
			return storeKey(t, bin, work, "awskms:name=service-accounts")
		}},
	} {
		t.Run(store.name, func(t *testing.T) {
			eachVersion(t, func(t *testing.T, version, bin, work string) {
				ref, key := store.key(t, bin, work)
				sock := filepath.Join(t.TempDir(), "signer.sock")
				startKeySigner(t, bin, work, sock, ref)
				report, err := signertest.Run(t.Context(), signertest.Config{Address: sock})
				require.NoError(t, err)
				require.NoError(t, report.Err(), "%s", report)

				cp := controlplane.StartForTest(t, controlplane.Config{Version: version, SigningEndpoint: sock})
				token, username := podToken(t, cp)
				h, err := signertest.CheckHeader(strings.Split(token, ".")[0])
				require.NoError(t, err)
				assert.Equal(t, signertest.Header{Algorithm: key.Algorithm, KeyID: key.KeyID, Type: "JWT"}, h)

				st := tokenReview(t, cp, token)
				require.True(t, st.Authenticated, st.Error)
				assert.Equal(t, username, st.User.Username)
				src, err := jwks.NewStaticSource(key)
				require.NoError(t, err)
				v, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: cp.Issuers, Keys: src, Audiences: []string{"vault"},
					Objects: clientgo.ObjectGetter(cp.Clientset())})
				require.NoError(t, err)
				res, err := v.Validate(t.Context(), token)
				require.NoError(t, err)
				assert.Equal(t, username, res.UserInfo().Username)
				assert.Equal(t, st.User.UID, res.UserInfo().UID)
				assert.NotEmpty(t, res.UserInfo().Extra[ksaid.ExtraPodName])

				docs, err := oidc.Render(oidc.IssuerConfig{Issuer: cp.Issuers[0], ExternalAddress: strings.TrimPrefix(cp.URL, "https://")}, []jwks.Key{key})
				require.NoError(t, err)
				discovery, keySet := cp.Documents(t)
				assert.Equal(t, string(docs.Discovery), string(discovery), "discovery document")
				assert.Equal(t, string(docs.JWKS), string(keySet), "key set")
			})
		})
	}
}

// podToken makes a service account and a pod using it, and returns a
// TokenRequest token bound to the pod for "vault", and the account's
// username.
func podToken(t *testing.T, cp *controlplane.ControlPlane) (string, string) {
	t.Helper()
	cs := cp.Clientset()
	ns := cp.Namespace(t)
	sa, err := cs.CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "billing"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	automount := false
	pod, err := cs.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "billing-0"},
		Spec: corev1.PodSpec{ServiceAccountName: sa.Name, AutomountServiceAccountToken: &automount,
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	exp := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa.Name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: []string{"vault"}, ExpirationSeconds: &exp,
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return tr.Status.Token, "system:serviceaccount:" + ns + ":" + sa.Name
}

// tokenReview asks kube-apiserver about token for "vault".
func tokenReview(t *testing.T, cp *controlplane.ControlPlane, token string) authenticationv1.TokenReviewStatus {
	t.Helper()
	out, err := cp.Clientset().AuthenticationV1().TokenReviews().Create(t.Context(), &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{"vault"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return out.Status
}
