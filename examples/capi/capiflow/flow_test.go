package capiflow_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/examples/capi/capiflow"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/publish/publishtest"
	"github.com/ksa-go/ksa/rotation"
)

// hsm stands for a key store whose keys never leave it: its signers are
// not *rsa.PrivateKey, so clusterapi refuses them.
type hsm struct {
	mu   sync.Mutex
	keys map[string]*rsa.PrivateKey
}

func newHSM() *hsm { return &hsm{keys: map[string]*rsa.PrivateKey{}} }

func (h *hsm) Create(_ context.Context, ref string, spec keystore.KeySpec) (keystore.Created, error) {
	if _, err := keystore.ParseNewKeyRef(ref); err != nil {
		return keystore.Created{}, err
	}
	key, err := rsa.GenerateKey(rand.Reader, spec.Bits)
	if err != nil {
		return keystore.Created{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.keys[ref]; ok {
		return keystore.Created{}, errors.New("a key with that reference exists")
	}
	h.keys[ref] = key
	return keystore.Created{Ref: ref, Public: key.Public()}, nil
}

func (h *hsm) Open(_ context.Context, ref string) (crypto.Signer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key, ok := h.keys[ref]
	if !ok {
		return nil, errors.New("no key " + ref)
	}
	return struct{ crypto.Signer }{key}, nil
}

func (h *hsm) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.keys)
}

// site is an in-memory store served over https at /PREFIX/..., as a
// bucket serves its objects.
type site struct {
	store  *publishtest.Store
	issuer string
	client *http.Client
}

func newSite(t *testing.T, prefix string) *site {
	t.Helper()
	store := publishtest.NewStore(prefix)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, ok := store.Object(strings.TrimPrefix(r.URL.Path, "/"+prefix+"/"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", o.ContentType)
		w.Header().Set("Cache-Control", o.CacheControl)
		_, _ = w.Write(o.Data)
	}))
	t.Cleanup(srv.Close)
	return &site{store: store, issuer: srv.URL + "/" + prefix, client: srv.Client()}
}

// keySet returns the key IDs the site publishes.
func (s *site) keySet(t *testing.T) []string {
	t.Helper()
	o, ok := s.store.Object("openid/v1/jwks")
	require.True(t, ok)
	set, err := jwks.ParseSet(o.Data, jwks.ParseOptions{})
	require.NoError(t, err)
	var ids []string
	for _, k := range set.Keys {
		ids = append(ids, k.KeyID)
	}
	return ids
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newRefs(t *testing.T) func(string) string {
	t.Helper()
	ref, err := capiflow.PKCS11KeyRef("", "ksa", "/run/secrets/pin")
	require.NoError(t, err)
	return ref
}

// TestSecret: a key made in memory is published, written as the
// <cluster>-sa Secret and read back; a later run reads it again; it is
// not rotated here.
func TestSecret(t *testing.T) {
	ctx := t.Context()
	s := newSite(t, "cluster-1")
	kube := fake.NewClientset()
	clk := &clock{t: time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)}
	flow, err := capiflow.New(capiflow.Config{Cluster: "cluster-1", Namespace: "fleet", Kube: kube.CoreV1(),
		Store: s.store, Issuer: s.issuer, HTTPClient: s.client, Now: clk.Now})
	require.NoError(t, err)

	res, err := flow.Reconcile(ctx)
	require.NoError(t, err)
	require.NotNil(t, res.Setup)
	assert.Equal(t, capiflow.ClusterSecret, res.Distribution)
	assert.Empty(t, res.Setup.Key)
	assert.NoError(t, res.Setup.Refused)
	assert.Empty(t, res.Setup.Check.Findings)
	assert.Equal(t, []string{res.Setup.KeyID}, s.keySet(t))
	require.NotNil(t, res.Pair)
	assert.Equal(t, res.Setup.KeyID, res.Pair.KeyID)
	assert.Equal(t, res.Setup.KeyID, res.Verified.KeyID)
	assert.Equal(t, "system:serviceaccount:default:default", res.Verified.UserInfo().Username)

	stored, err := kube.CoreV1().Secrets("fleet").Get(ctx, "cluster-1-sa", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, clusterapi.SecretType, stored.Type)
	_, err = kube.CoreV1().ConfigMaps("fleet").Get(ctx, capiflow.RingName("cluster-1"), metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "no ring file for a key in the Secret: %v", err)

	again, err := flow.Reconcile(ctx)
	require.NoError(t, err)
	assert.Nil(t, again.Setup)
	assert.Equal(t, res.Setup.KeyID, again.Pair.KeyID)
	assert.Equal(t, res.Setup.KeyID, again.Verified.KeyID)

	_, _, err = flow.Rotate(ctx)
	assert.ErrorIs(t, err, capiflow.ErrNoKeyStore)
}

// TestExternalSigner: a key in a key store is refused for the Secret
// (clusterapi.ErrKeyNotExportable), the ring file is written instead,
// and later runs rotate it: the next key, made in the key store, is
// published and its tokens verify before it signs; then it signs.
func TestExternalSigner(t *testing.T) {
	ctx := t.Context()
	s := newSite(t, "cluster-2")
	kube := fake.NewClientset()
	keys := newHSM()
	start := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	clk := &clock{t: start}
	cadence := rotation.Cadence{Every: 30 * 24 * time.Hour, Delay: time.Minute, Propagation: 2 * time.Hour}
	flow, err := capiflow.New(capiflow.Config{Cluster: "cluster-2", Namespace: "fleet", Kube: kube.CoreV1(),
		Store: s.store, Issuer: s.issuer, HTTPClient: s.client, Keys: keys, NewKeyRef: newRefs(t), Cadence: cadence, Now: clk.Now})
	require.NoError(t, err)

	res, err := flow.Reconcile(ctx)
	require.NoError(t, err)
	require.NotNil(t, res.Setup)
	assert.Equal(t, capiflow.ExternalSigner, res.Distribution)
	assert.ErrorIs(t, res.Setup.Refused, clusterapi.ErrKeyNotExportable)
	assert.Contains(t, res.Setup.Key, "object=cluster-2-sa-20260131000000")
	assert.Nil(t, res.Pair)
	assert.Equal(t, res.Setup.KeyID, res.Verified.KeyID)
	first := res.Setup.KeyID
	_, err = kube.CoreV1().Secrets("fleet").Get(ctx, "cluster-2-sa", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "no Secret for a key in a key store: %v", err)
	ring, _, err := flow.Ring().Read(ctx)
	require.NoError(t, err)
	require.Len(t, ring.Keys, 1)
	assert.Equal(t, res.Setup.Key, ring.Keys[0].Key)

	// Before the period is over, the step waits, and the key that signs
	// still verifies.
	clk.Add(24 * time.Hour)
	res, err = flow.Reconcile(ctx)
	require.NoError(t, err)
	assert.Equal(t, rotation.Wait, res.Step.Action.Kind)
	assert.Equal(t, rotation.WaitEvery, res.Step.Action.For)
	assert.Equal(t, first, res.Verified.KeyID)

	clk.Add(cadence.Every)
	res, err = flow.Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, rotation.PublishNext, res.Step.Action.Kind)
	assert.Equal(t, 2, keys.count())
	assert.Contains(t, res.Step.NextKey, "object=cluster-2-sa-20260303000000")
	assert.ElementsMatch(t, []string{first, res.Step.NextKeyID}, s.keySet(t))
	assert.Equal(t, res.Step.NextKeyID, res.Verified.KeyID, "a token of the next key verifies before it signs")
	next := res.Step.NextKeyID

	clk.Add(cadence.Propagation)
	res, err = flow.Reconcile(ctx)
	require.NoError(t, err)
	assert.Equal(t, rotation.SignNext, res.Step.Action.Kind)
	assert.Equal(t, next, res.Step.Action.Next)
	ring, _, err = flow.Ring().Read(ctx)
	require.NoError(t, err)
	require.Len(t, ring.Keys, 2)
	assert.Equal(t, clk.Now().Add(cadence.Delay), ring.Keys[1].Primary)
}

// TestSetupLeavesAnIssuerAlone: a location that publishes an issuer
// already is not written over, and nothing reaches the cluster.
func TestSetupLeavesAnIssuerAlone(t *testing.T) {
	ctx := t.Context()
	s := newSite(t, "cluster-3")
	require.NoError(t, s.store.Put(ctx, publish.Object{Name: ".well-known/openid-configuration", Data: []byte("{}")}))
	kube := fake.NewClientset()
	flow, err := capiflow.New(capiflow.Config{Cluster: "cluster-3", Namespace: "fleet", Kube: kube.CoreV1(),
		Store: s.store, Issuer: s.issuer, HTTPClient: s.client})
	require.NoError(t, err)
	_, err = flow.Reconcile(ctx)
	require.ErrorIs(t, err, publish.ErrChanged)
	o, _ := s.store.Object(".well-known/openid-configuration")
	assert.Equal(t, "{}", string(o.Data))
	_, err = kube.CoreV1().Secrets("fleet").Get(ctx, "cluster-3-sa", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
}

// TestReadFailsForAnUnpublishedKey: a <cluster>-sa Secret found with a
// key nobody published (Cluster API generated it) fails the run.
func TestReadFailsForAnUnpublishedKey(t *testing.T) {
	ctx := t.Context()
	s := newSite(t, "cluster-4")
	kube := fake.NewClientset()
	flow, err := capiflow.New(capiflow.Config{Cluster: "cluster-4", Namespace: "fleet", Kube: kube.CoreV1(),
		Store: s.store, Issuer: s.issuer, HTTPClient: s.client})
	require.NoError(t, err)
	_, err = flow.Reconcile(ctx) // publishes its own key
	require.NoError(t, err)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	generated, err := clusterapi.NewSecret("cluster-4", other, clusterapi.SecretOptions{Namespace: "fleet"})
	require.NoError(t, err)
	_, err = kube.CoreV1().Secrets("fleet").Update(ctx, generated, metav1.UpdateOptions{})
	require.NoError(t, err)
	_, err = flow.Reconcile(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "verifying a token of kid")
}

// TestRingRefusesBadConfigMaps: a ConfigMap without the ring file, or
// with one that does not parse, is refused.
func TestRingRefusesBadConfigMaps(t *testing.T) {
	for _, tt := range []struct {
		name string
		data map[string]string
		want error
	}{
		{name: "missing", want: publish.ErrNotFound},
		{name: "no ring file", data: map[string]string{"other": "x"}, want: publish.ErrStore},
		{name: "too large", data: map[string]string{capiflow.RingKey: strings.Repeat(" ", 1<<20+1)}, want: publish.ErrStore},
		{name: "not a ring file", data: map[string]string{capiflow.RingKey: `{"keys":[{"nope":1}]}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kube := fake.NewClientset()
			if tt.data != nil {
				_, err := kube.CoreV1().ConfigMaps("fleet").Create(t.Context(), &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "r"}, Data: tt.data}, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			ring := &capiflow.ConfigMapRing{Client: kube.CoreV1(), Namespace: "fleet", Name: "r"}
			_, _, err := ring.Read(t.Context())
			require.Error(t, err)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
			}
		})
	}
}

// TestNewRefusesConfigs: every required field, names Kubernetes refuses.
func TestNewRefusesConfigs(t *testing.T) {
	store := publishtest.NewStore("c")
	kube := fake.NewClientset().CoreV1()
	good := capiflow.Config{Cluster: "cluster-1", Namespace: "fleet", Kube: kube, Store: store, Issuer: "https://oidc.example.com/c"}
	for _, tt := range []struct {
		name  string
		edit  func(c *capiflow.Config)
		field string
	}{
		{name: "cluster", edit: func(c *capiflow.Config) { c.Cluster = "Cluster_1" }, field: "capiflow.Config.Cluster"},
		{name: "namespace", edit: func(c *capiflow.Config) { c.Namespace = "" }, field: "capiflow.Config.Namespace"},
		{name: "kube", edit: func(c *capiflow.Config) { c.Kube = nil }, field: "capiflow.Config.Kube"},
		{name: "store", edit: func(c *capiflow.Config) { c.Store = nil }, field: "capiflow.Config.Store"},
		{name: "key refs", edit: func(c *capiflow.Config) { c.Keys = newHSM() }, field: "capiflow.Config.NewKeyRef"},
		{name: "issuer", edit: func(c *capiflow.Config) { c.Issuer = "" }, field: "capiflow.Config.Issuer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good
			tt.edit(&cfg)
			_, err := capiflow.New(cfg)
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tt.field, ce.Field)
			assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
		})
	}
	_, err := capiflow.New(good)
	require.NoError(t, err)
}

// TestPKCS11KeyRef: each name gets its own id and object; the module,
// token and PIN file are %-encoded; an empty token is refused.
func TestPKCS11KeyRef(t *testing.T) {
	ref, err := capiflow.PKCS11KeyRef("/opt/my hsm/lib.so", "ksa", "/run/pin")
	require.NoError(t, err)
	a, b := ref("cluster-1-sa-20260131000000"), ref("cluster-1-sa-20260302000000")
	assert.NotEqual(t, a, b)
	for _, r := range []string{a, b} {
		parsed, err := keystore.ParseNewKeyRef(r)
		require.NoError(t, err)
		assert.Equal(t, "/opt/my hsm/lib.so", parsed.Attr("module-path"))
		assert.Equal(t, "ksa", parsed.Attr("token"))
		assert.Equal(t, "/run/pin", parsed.Attr("pin-source"))
		assert.Len(t, parsed.ObjectID(), 8)
	}
	assert.Contains(t, a, "module-path=/opt/my%20hsm/lib.so")
	assert.Contains(t, a, ";object=cluster-1-sa-20260131000000")

	_, err = capiflow.PKCS11KeyRef("", "", "/run/pin")
	assert.ErrorIs(t, err, keystore.ErrInvalidRef)
}
