package apiserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/interop/clientgo"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokenreview"
	"github.com/ksa-go/ksa/tokens"
)

// TestTokenReviewNoticesDeletedPod: three relying parties hold the same
// pod-bound TokenRequest token: local only (keys, no object getter), local
// then TokenReview, and TokenReview only. While the pod lives all accept it
// with the same identity; a forged token never reaches the apiserver from
// the second; once the pod is deleted, the two that ask the apiserver
// refuse the token, and local validation alone still accepts it (until it
// expires).
func TestTokenReviewNoticesDeletedPod(t *testing.T) {
	shared.Each(t, testTokenReviewNoticesDeletedPod)
}

func testTokenReviewNoticesDeletedPod(t *testing.T, cp *controlplane.ControlPlane) {
	f := newFixture(t, cp)
	key, err := jwks.NewKey(cp.SigningKey.Public())
	require.NoError(t, err)
	keys, err := jwks.NewStaticSource(key)
	require.NoError(t, err)
	local, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: cp.Issuers, Keys: keys, Audiences: []string{vaultAudience}, SkipObjectCheck: true,
	})
	require.NoError(t, err)
	var reviews atomic.Int32
	api := clientgo.Reviewer(cp.Clientset())
	counted := tokenreview.ReviewerFunc(func(ctx context.Context, req tokenreview.Request) (*tokenreview.Status, error) {
		reviews.Add(1)
		return api.Review(ctx, req)
	})
	thenReview, err := tokenreview.NewValidator(tokenreview.ValidatorConfig{Local: local.ValidateFor, Reviewer: counted, Audiences: []string{vaultAudience}})
	require.NoError(t, err)
	reviewOnly, err := tokenreview.NewValidator(tokenreview.ValidatorConfig{Mode: tokenreview.ReviewOnly, Reviewer: counted, Audiences: []string{vaultAudience}})
	require.NoError(t, err)
	validators := map[string]func(context.Context, string) (*tokens.Result, error){
		"local only": local.Validate, "local then review": thenReview.Validate, "review only": reviewOnly.Validate,
	}

	// kube-apiserver caches a successful review for 10 s per token and
	// audiences, so the tokens reviewed after the deletion are ones it has
	// not answered before (see untilRefused); all are bound to the same pod.
	before := f.requestToken(t, []string{vaultAudience}, 3600, true).Status.Token
	after := make([]string, deletionTries)
	for i := range after {
		after[i] = f.requestToken(t, []string{vaultAudience}, 3600, true).Status.Token
	}
	want := ksa.Identity{
		ServiceAccount: ksa.ServiceAccount{Namespace: f.ns, Name: f.sa.Name, UID: string(f.sa.UID)},
		Pod:            ksa.ObjectRef{Name: f.pod.Name, UID: string(f.pod.UID)},
	}
	for name, validate := range validators {
		res, err := validate(t.Context(), before)
		require.NoError(t, err, name)
		assert.Equal(t, want.ServiceAccount, res.Identity.ServiceAccount, name)
		assert.Equal(t, want.Pod, res.Identity.Pod, name)
		assert.Equal(t, []string{vaultAudience}, res.Audiences, name)
	}
	assert.EqualValues(t, 2, reviews.Load())

	// A token with the same claims under another key: refused locally
	// before any review, and by the apiserver when asked.
	forger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	// The forger names the real key's ID.
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: cp.Issuers[0], Signer: forger, KeyID: key.KeyID})
	require.NoError(t, err)
	forged, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: want.ServiceAccount, Audiences: []string{vaultAudience},
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: f.pod.Name, UID: string(f.pod.UID)}})
	require.NoError(t, err)
	_, err = thenReview.Validate(t.Context(), forged.Raw)
	require.ErrorIs(t, err, tokens.ErrBadSignature)
	assert.EqualValues(t, 2, reviews.Load(), "the forged token did not reach the apiserver")
	_, err = reviewOnly.Validate(t.Context(), forged.Raw)
	require.ErrorIs(t, err, tokenreview.ErrNotAuthenticated)

	require.NoError(t, cp.Clientset().CoreV1().Pods(f.ns).Delete(t.Context(), f.pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}))
	for _, tok := range after {
		_, err = local.Validate(t.Context(), tok)
		require.NoError(t, err, "local validation alone cannot see the deletion")
	}
	// The last token is kept for the review-only party.
	refused := untilRefused(t, after[:len(after)-1], func(ctx context.Context, token string) error {
		_, err := thenReview.Validate(ctx, token)
		return err
	})
	require.ErrorIs(t, refused, tokenreview.ErrNotAuthenticated)
	assert.Contains(t, refused.Error(), "invalidated")
	_, err = reviewOnly.Validate(t.Context(), after[len(after)-1])
	require.ErrorIs(t, err, tokenreview.ErrNotAuthenticated)
}

// TestInClusterDiscovery: a relying party in a pod (anonymous requests
// off) finds its cluster's issuer and keys through the API server with the
// pod's token and the cluster CA, and verifies TokenRequest tokens.
func TestInClusterDiscovery(t *testing.T) {
	shared.Each(t, testInClusterDiscovery)
}

func testInClusterDiscovery(t *testing.T, cp *controlplane.ControlPlane) {
	f := newFixture(t, cp)
	// Anonymous requests are refused: the credential is needed.
	resp, err := inClusterClient(cp).Get(cp.URL + oidc.DiscoveryPath)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "anonymous auth is off")

	// What the kubelet mounts into the pod: the CA bundle and the token.
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	podToken := f.requestToken(t, []string{controlplane.DefaultIssuer}, 3600, true).Status.Token
	require.NoError(t, os.WriteFile(tokenFile, []byte(podToken), 0o600))
	caPEM, err := os.ReadFile(cp.Files.CACert)
	require.NoError(t, err)
	caFile := filepath.Join(dir, "ca.crt")
	require.NoError(t, os.WriteFile(caFile, caPEM, 0o600))

	v, err := oidc.NewInClusterVerifier(t.Context(), oidc.InClusterConfig{APIServer: cp.URL, CAFile: caFile, TokenFile: tokenFile,
		Verifier: oidc.VerifierConfig{Audiences: []string{vaultAudience}}})
	require.NoError(t, err)
	assert.NotNil(t, v.Provider(cp.Issuers[0]), "the issuer the API server names")

	res, err := v.Verify(t.Context(), f.requestToken(t, []string{vaultAudience}, 3600, true).Status.Token)
	require.NoError(t, err)
	assert.Equal(t, cp.Issuers[0], res.Issuer)
	assert.Equal(t, "system:serviceaccount:"+f.ns+":billing", res.UserInfo().Username)
}

// deletionTries is how many fresh tokens untilRefused may present,
// deletionPoll apart.
const (
	deletionTries = 25
	deletionPoll  = 200 * time.Millisecond
)

// untilRefused presents tokens bound to a pod just deleted to review, one
// at a time, deletionPoll apart, until it refuses one, and returns the
// refusal; it fails the test if review accepts them
// all. kube-apiserver looks a bound pod up in its informer's cache first,
// which learns of a deletion a moment after the DELETE returns; until then
// it accepts the token and caches that answer for 10 s, so each try takes a
// token it has not seen.
func untilRefused(t *testing.T, tokens []string, review func(ctx context.Context, token string) error) error {
	t.Helper()
	tries := 0
	var refused error
	err := wait.PollUntilContextTimeout(t.Context(), deletionPoll, time.Duration(len(tokens))*deletionPoll, true, func(ctx context.Context) (bool, error) {
		if tries == len(tokens) {
			return false, errors.New("every token was still accepted")
		}
		refused = review(ctx, tokens[tries])
		tries++
		return refused != nil, nil
	})
	require.NoError(t, err, "the apiserver did not notice the pod's deletion after %d tries", tries)
	t.Logf("the apiserver refused the token of a deleted pod at try %d", tries)
	return refused
}
