// Package capiexample runs the Cluster API example (examples/capi, its
// work in package capiflow) against real peers: the issuer's keys on a
// SoftHSM2 token through keystore/pkcs11, the issuer published to Azure
// Blob Storage (Azurite) through publish/azblob and served over https as
// anonymous readers get it, and the management cluster a real
// kube-apiserver (v1.37.2 and v1.36.3). It proves both roads a controller
// chooses between: a key in the HSM refused for Cluster API's Secret and
// handed to external signers as a ring file in a ConfigMap, rotated one
// scheduled step at a time with its next key made on the token; and an
// exportable key written as the <cluster>-sa Secret and read back. Every
// token is verified through the published documents by go-oidc, a relying
// party that is not ksa's.
package capiexample

import (
	"context"
	"crypto"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/examples/capi/capiflow"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/keystoretest"
	"github.com/ksa-go/ksa/keystore/pkcs11"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/publish/azblob"
	"github.com/ksa-go/ksa/rotation"
	"github.com/ksa-go/ksa/tokens"
)

var plane controlplane.Shared

func TestMain(m *testing.M) { os.Exit(plane.Run(m, controlplane.Config{})) }

// container is the Azure container the issuers are published in.
const containerName = "oidc"

// peers are the programs every subtest shares.
type peers struct {
	hsm       *keystoretest.SoftHSM
	keys      *pkcs11.Store
	newKeyRef func(string) string
	az        *azurite
	front     string
	frontCA   []byte
	client    *http.Client
}

// cadence is the rotation's: a key signs 90 days, its successor
// published an hour before it signs.
var cadence = rotation.Cadence{Every: 90 * 24 * time.Hour, Delay: time.Minute, Propagation: time.Hour}

// TestCAPIExample runs the example's flow on each kube-apiserver release,
// for a cluster whose keys are on the SoftHSM2 token and for one whose
// key is handed over in the <cluster>-sa Secret.
func TestCAPIExample(t *testing.T) {
	p := &peers{hsm: keystoretest.StartSoftHSM(t), az: startAzurite(t)}
	var err error
	p.keys, err = pkcs11.NewStore(pkcs11.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.keys.Close()) })
	p.newKeyRef, err = capiflow.PKCS11KeyRef(p.hsm.Module, p.hsm.Token, p.hsm.PINFile)
	require.NoError(t, err)
	p.az.publicContainer(t, containerName)
	front := p.az.front(t, containerName)
	p.front, p.client = front.URL, front.Client()
	p.frontCA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: front.Certificate().Raw})

	bin := filepath.Join(t.TempDir(), "capi")
	plane.Each(t, func(t *testing.T, cp *controlplane.ControlPlane) {
		ns := cp.Namespace(t)
		t.Run("key in SoftHSM2: external signer", func(t *testing.T) { testExternalSigner(t, p, cp, ns) })
		t.Run("exportable key: the -sa Secret", func(t *testing.T) { testSecret(t, p, cp, ns) })
		t.Run("the program", func(t *testing.T) { testProgram(t, p, cp, ns, bin) })
	})
}

// flowFor is the example's flow for a cluster of ns, published under
// ns/cluster in the container, on the clock now.
func (p *peers) flowFor(t *testing.T, cp *controlplane.ControlPlane, ns, cluster string, keys capiflow.Keys, now func() time.Time) *capiflow.Flow {
	t.Helper()
	loc, err := publish.ParseLocation("https://" + azuriteAccount + ".blob.core.windows.net/" + containerName + "/" + ns + "/" + cluster)
	require.NoError(t, err)
	store, err := publish.Open(t.Context(), loc, publish.Config{
		Openers: map[publish.Kind]publish.Opener{publish.Azure: azblob.Open},
		Getenv: func(name string) string {
			if name == "AZURE_STORAGE_CONNECTION_STRING" {
				return p.az.connectionString()
			}
			return ""
		},
	})
	require.NoError(t, err)
	cfg := capiflow.Config{Cluster: cluster, Namespace: ns, Kube: cp.Clientset().CoreV1(), Store: store,
		Issuer: p.front + "/" + ns + "/" + cluster, HTTPClient: p.client, Cadence: cadence, Now: now}
	if keys != nil {
		cfg.Keys, cfg.NewKeyRef = keys, p.newKeyRef
	}
	flow, err := capiflow.New(cfg)
	require.NoError(t, err)
	return flow
}

// testExternalSigner: the first key is made on the token and published;
// Cluster API's Secret refuses it; the ring file reaches the API server
// as a ConfigMap; the scheduled rotation waits, then publishes the next
// key, made on the token, whose tokens verify through the published
// documents before it signs, then makes it sign.
func testExternalSigner(t *testing.T, p *peers, cp *controlplane.ControlPlane, ns string) {
	ctx := t.Context()
	const cluster = "hsm-1"
	start := time.Now().UTC().Truncate(time.Second)
	now := start
	flow := p.flowFor(t, cp, ns, cluster, p.keys, func() time.Time { return now })

	// Set up.
	res, err := flow.Reconcile(ctx)
	require.NoError(t, err)
	s := res.Setup
	require.NotNil(t, s)
	assert.Equal(t, capiflow.ExternalSigner, res.Distribution)
	t.Logf("set up: key %s (kid %s); published %d objects; %d findings", s.Key, s.KeyID, len(s.Published.Objects), len(s.Check.Findings))
	assert.True(t, strings.HasPrefix(s.Key, "pkcs11:module-path="+p.hsm.Module+";token="+p.hsm.Token+";"), s.Key)
	assert.Empty(t, s.Check.Findings, "the published issuer, as the clouds fetch it")
	require.ErrorIs(t, s.Refused, clusterapi.ErrKeyNotExportable)
	t.Logf("the Secret refused: %v", s.Refused)

	// The key is on the token: opened there, it gives no private key, and
	// Cluster API's Secret refuses it by reference too.
	signer, err := p.keys.Open(ctx, s.Key)
	require.NoError(t, err)
	_, isRSA := signer.(*rsa.PrivateKey)
	assert.False(t, isRSA)
	_, err = clusterapi.NewSecretFromRef(cluster, mustRef(t, s.Key), clusterapi.SecretOptions{Namespace: ns})
	assert.ErrorIs(t, err, clusterapi.ErrKeyNotExportable)
	_, err = cp.Clientset().CoreV1().Secrets(ns).Get(ctx, clusterapi.SecretName(cluster), metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "no <cluster>-sa Secret on the API server: %v", err)

	// The ring file on the API server.
	cm, err := cp.Clientset().CoreV1().ConfigMaps(ns).Get(ctx, capiflow.RingName(cluster), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, cluster, cm.Labels[clusterapi.ClusterNameLabel])
	ring, err := extsigner.ParseRingFile([]byte(cm.Data[capiflow.RingKey]))
	require.NoError(t, err)
	require.Len(t, ring.Keys, 1)
	assert.Equal(t, s.Key, ring.Keys[0].Key)
	assert.True(t, start.Equal(ring.Keys[0].Primary))

	// The documents as anonymous readers get them, and a token of the
	// first key verified by go-oidc.
	assert.Equal(t, []string{s.KeyID}, p.published(t, flow.Issuer()))
	assert.Equal(t, s.KeyID, res.Verified.KeyID)
	p.goOIDCVerifies(t, flow.Issuer(), signer, now)

	// A day later the step waits for the period to end.
	now = start.Add(24 * time.Hour)
	res, err = flow.Reconcile(ctx)
	require.NoError(t, err)
	require.NotNil(t, res.Step)
	assert.Equal(t, rotation.Wait, res.Step.Action.Kind)
	assert.Equal(t, rotation.WaitEvery, res.Step.Action.For)
	assert.True(t, start.Add(cadence.Every).Equal(res.Step.Action.At), "until %s", res.Step.Action.At)
	assert.Equal(t, s.KeyID, res.Verified.KeyID)

	// The period over, the step publishes the next key, made on the token.
	now = start.Add(cadence.Every)
	res, err = flow.Reconcile(ctx)
	require.NoError(t, err)
	step := res.Step
	require.Equal(t, rotation.PublishNext, step.Action.Kind)
	t.Logf("rotation step: %s, next key %s (kid %s)", step.Action.Kind, step.NextKey, step.NextKeyID)
	assert.Contains(t, step.NextKey, ";object="+cluster+"-sa-"+now.Format("20060102150405")+"?")
	next, err := p.keys.Open(ctx, step.NextKey)
	require.NoError(t, err)
	nextKID, err := jwks.KeyID(next.Public())
	require.NoError(t, err)
	assert.Equal(t, step.NextKeyID, nextKID)
	assert.ElementsMatch(t, []string{s.KeyID, nextKID}, p.published(t, flow.Issuer()))
	assert.Equal(t, nextKID, res.Verified.KeyID, "the flow verified a token of the next key")
	p.goOIDCVerifies(t, flow.Issuer(), next, now)
	p.goOIDCVerifies(t, flow.Issuer(), signer, now)

	// The ring ConfigMap is written only at the version read: a writer
	// holding an older one is refused by the API server.
	rs := flow.Ring()
	current, v, err := rs.Read(ctx)
	require.NoError(t, err)
	require.Len(t, current.Keys, 2)
	assert.True(t, current.Keys[1].Primary.IsZero(), "the next key does not sign yet")
	current.RefreshHint = extsigner.DefaultRefreshHint // the same ring, written out
	require.NoError(t, rs.Write(ctx, current, v))
	err = rs.Write(ctx, current, v)
	assert.ErrorIs(t, err, publish.ErrChanged, "a write on the version read before")
	stale := &capiflow.ConfigMapRing{Client: &staleGet{ConfigMapInterface: cp.Clientset().CoreV1().ConfigMaps(ns), rv: v}, Namespace: ns, Name: rs.Name}
	err = stale.Write(ctx, current, v)
	assert.ErrorIs(t, err, publish.ErrChanged, "the update on an old resourceVersion")

	// Propagated, the next key signs Delay after the step.
	now = now.Add(cadence.Propagation)
	res, err = flow.Reconcile(ctx)
	require.NoError(t, err)
	require.Equal(t, rotation.SignNext, res.Step.Action.Kind)
	assert.Equal(t, nextKID, res.Step.Action.Next)
	cm, err = cp.Clientset().CoreV1().ConfigMaps(ns).Get(ctx, capiflow.RingName(cluster), metav1.GetOptions{})
	require.NoError(t, err)
	ring, err = extsigner.ParseRingFile([]byte(cm.Data[capiflow.RingKey]))
	require.NoError(t, err)
	require.Len(t, ring.Keys, 2)
	assert.True(t, now.Add(cadence.Delay).Equal(ring.Keys[1].Primary), "signs from %s", ring.Keys[1].Primary)
}

// testSecret: a key made in memory is published and written to the API
// server as Cluster API's Secret, read back with clusterapi.ReadSecret,
// its tokens verified through the published documents.
func testSecret(t *testing.T, p *peers, cp *controlplane.ControlPlane, ns string) {
	ctx := t.Context()
	const cluster = "secret-1"
	now := time.Now().UTC().Truncate(time.Second)
	flow := p.flowFor(t, cp, ns, cluster, nil, func() time.Time { return now })

	res, err := flow.Reconcile(ctx)
	require.NoError(t, err)
	s := res.Setup
	require.NotNil(t, s)
	assert.Equal(t, capiflow.ClusterSecret, res.Distribution)
	assert.Empty(t, s.Key)
	assert.NoError(t, s.Refused)
	assert.Empty(t, s.Check.Findings)

	got, err := cp.Clientset().CoreV1().Secrets(ns).Get(ctx, clusterapi.SecretName(cluster), metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, clusterapi.SecretType, got.Type)
	assert.Equal(t, cluster, got.Labels[clusterapi.ClusterNameLabel])
	assert.NotEmpty(t, got.Data[corev1.TLSPrivateKeyKey], "Cluster API copies tls.key to the nodes")
	pair, err := clusterapi.ReadSecret(got)
	require.NoError(t, err)
	assert.Equal(t, s.KeyID, pair.KeyID)
	t.Logf("Secret %s/%s read back: kid %s", ns, got.Name, pair.KeyID)
	_, err = cp.Clientset().CoreV1().ConfigMaps(ns).Get(ctx, capiflow.RingName(cluster), metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "no ring file for a key in the Secret: %v", err)

	assert.Equal(t, []string{s.KeyID}, p.published(t, flow.Issuer()))
	assert.Equal(t, s.KeyID, res.Verified.KeyID)
	p.goOIDCVerifies(t, flow.Issuer(), pair.Signer, now)

	// A later run reads the Secret back and verifies its key again.
	res, err = flow.Reconcile(ctx)
	require.NoError(t, err)
	assert.Nil(t, res.Setup)
	assert.Equal(t, s.KeyID, res.Pair.KeyID)
	assert.Equal(t, s.KeyID, res.Verified.KeyID)
}

// testProgram runs the example program itself, as a user does, with
// flags and the environment: a kubeconfig for the API server, the token's
// module, label and PIN file, Azurite's connection string in
// AZURE_STORAGE_CONNECTION_STRING, the front's CA. The first run sets the
// cluster up (the Secret refused, the ring file written), a run 90 days
// later publishes the next key; a cluster without the token gets the
// Secret.
func testProgram(t *testing.T, p *peers, cp *controlplane.ControlPlane, ns, bin string) {
	buildProgram(t, bin)
	work := t.TempDir()
	kubeconfig := filepath.Join(work, "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(kubeconfigFor(cp)), 0o600))
	ca := filepath.Join(work, "front-ca.pem")
	require.NoError(t, os.WriteFile(ca, p.frontCA, 0o600))
	capi := func(cluster string, args ...string) string {
		t.Helper()
		args = append([]string{"-kubeconfig", kubeconfig, "-namespace", ns, "-cluster", cluster,
			"-to", "https://" + azuriteAccount + ".blob.core.windows.net/" + containerName + "/" + ns + "/" + cluster,
			"-issuer", p.front + "/" + ns + "/" + cluster, "-ca-file", ca}, args...)
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), append(p.hsm.Env(), "AZURE_STORAGE_CONNECTION_STRING="+p.az.connectionString())...)
		out, err := cmd.CombinedOutput()
		t.Logf("capi %s:\n%s", strings.Join(args[6:], " "), out)
		require.NoError(t, err)
		return string(out)
	}
	hsmFlags := []string{"-pkcs11-module", p.hsm.Module, "-pkcs11-token", p.hsm.Token, "-pkcs11-pin-file", p.hsm.PINFile}

	out := capi("prog-hsm", hsmFlags...)
	assert.Contains(t, out, "cluster "+ns+"/prog-hsm: set up\n")
	assert.Contains(t, out, ", in the key store: pkcs11:module-path="+p.hsm.Module+";token="+p.hsm.Token+";")
	assert.Contains(t, out, "checked as Entra ID, AWS and Google fetch it: no problems found\n")
	assert.Contains(t, out, "  Secret "+ns+"/prog-hsm-sa not written: clusterapi: ")
	assert.Contains(t, out, "  ring file written to ConfigMap "+ns+"/prog-hsm-sa-ring: ")
	assert.Regexp(t, `a token signed by kid \S+ verified through https://127\.0\.0\.1:\d+/`+ns+`/prog-hsm as system:serviceaccount:default:default\n`, out)

	later := time.Now().UTC().Add(cadence.Every + time.Minute).Format(time.RFC3339)
	out = capi("prog-hsm", append(hsmFlags, "-insecure-now", later)...)
	assert.Contains(t, out, "cluster "+ns+"/prog-hsm: rotation step at "+later+" (stage steady): publish-next\n")
	m := regexp.MustCompile(`next key kid (\S+), in the key store: pkcs11:`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	assert.Contains(t, out, "a token signed by kid "+m[1]+" verified through ")
	assert.Contains(t, p.published(t, p.front+"/"+ns+"/prog-hsm"), m[1])

	out = capi("prog-secret")
	assert.Contains(t, out, ", made in memory\n")
	assert.Regexp(t, `Secret `+ns+`/prog-secret-sa written and read back: kid (\S+),`, out)
	got, err := cp.Clientset().CoreV1().Secrets(ns).Get(t.Context(), "prog-secret-sa", metav1.GetOptions{})
	require.NoError(t, err)
	pair, err := clusterapi.ReadSecret(got)
	require.NoError(t, err)
	assert.Contains(t, out, "written and read back: kid "+pair.KeyID+",")
}

// buildProgram builds examples/capi into bin, unless an earlier subtest
// did.
func buildProgram(t *testing.T, bin string) {
	t.Helper()
	if _, err := os.Stat(bin); err == nil {
		return
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command(goTool, "build", "-o", bin, "./examples/capi")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "building examples/capi: %s", out)
}

// kubeconfigFor is a kubeconfig for the control plane's admin.
func kubeconfigFor(cp *controlplane.ControlPlane) string {
	rc := cp.RESTConfig()
	return "apiVersion: v1\nkind: Config\n" +
		"clusters:\n- name: mgmt\n  cluster:\n    server: " + rc.Host + "\n    certificate-authority-data: " + base64.StdEncoding.EncodeToString(rc.CAData) + "\n" +
		"users:\n- name: admin\n  user:\n    token: " + rc.BearerToken + "\n" +
		"contexts:\n- name: mgmt\n  context:\n    cluster: mgmt\n    user: admin\n" +
		"current-context: mgmt\n"
}

// published returns the key IDs of the key set the issuer's discovery
// document names, fetched over https as an anonymous reader.
func (p *peers) published(t *testing.T, issuer string) []string {
	t.Helper()
	var md struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	require.NoError(t, json.Unmarshal(p.get(t, issuer+"/.well-known/openid-configuration"), &md))
	assert.Equal(t, issuer, md.Issuer)
	set, err := jwks.ParseSet(p.get(t, md.JWKSURI), jwks.ParseOptions{})
	require.NoError(t, err)
	var ids []string
	for _, k := range set.Keys {
		ids = append(ids, k.KeyID)
	}
	return ids
}

func (p *peers) get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := p.client.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	return body
}

// goOIDCVerifies mints a token with signer at now and has go-oidc verify
// it through the issuer's published documents.
func (p *peers) goOIDCVerifies(t *testing.T, issuer string, signer crypto.Signer, now time.Time) {
	t.Helper()
	clock := func() time.Time { return now }
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: signer, Now: clock})
	require.NoError(t, err)
	sa := capiflow.TokenServiceAccount()
	sa.UID = "0e1f3c7a-52b4-4d5e-8f6a-1b2c3d4e5f60"
	tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: sa, Audiences: []string{publish.EntraAudience}, ExpirationSeconds: 3600})
	require.NoError(t, err)
	ctx := gooidc.ClientContext(t.Context(), p.client)
	provider, err := gooidc.NewProvider(ctx, issuer)
	require.NoError(t, err)
	idt, err := provider.Verifier(&gooidc.Config{ClientID: publish.EntraAudience, Now: clock}).Verify(ctx, tok.Raw)
	require.NoError(t, err)
	assert.Equal(t, sa.Username(), idt.Subject)
}

// staleGet is a ConfigMaps client whose Get answers an older
// resourceVersion, as a lagging informer cache does: the update that
// follows is the API server's to refuse.
type staleGet struct {
	corev1client.ConfigMapInterface
	rv publish.Version
}

func (s *staleGet) ConfigMaps(string) corev1client.ConfigMapInterface { return s }

func (s *staleGet) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error) {
	cm, err := s.ConfigMapInterface.Get(ctx, name, opts)
	if err == nil {
		cm.ResourceVersion = string(s.rv)
	}
	return cm, err
}

// mustRef parses a key reference.
func mustRef(t *testing.T, ref string) keystore.Ref {
	t.Helper()
	r, err := keystore.ParseRef(ref)
	require.NoError(t, err)
	return r
}
