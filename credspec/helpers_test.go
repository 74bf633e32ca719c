package credspec_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/credspec"
)

// Fixtures of windows-gmsa's admission-webhook/utils_test.go.
const (
	dummyCredSpecName       = "dummy-cred-spec-name"
	dummyServiceAccountName = "dummy-service-account-name"
	dummyNamespace          = "dummy-namespace"
	dummyPodName            = "dummy-pod-name"
	dummyContainerName      = "dummy-container-name"
	dummyCredSpecContents   = `{"We don't need no": ["education", "thought control", "dark sarcasm in the classroom"], "All in all you're just another": {"brick": "in", "the": "wall"}}`
)

// contentsOf is what the fake source holds for any other name (windows-gmsa's
// fake returns "<name>-contents", which is not JSON; ours must be).
func contentsOf(name string) string { return fmt.Sprintf(`{"contents-of":%q}`, name) }

func canonical(t testing.TB, s string) string {
	t.Helper()
	c, err := credspec.Canonical(s)
	require.NoError(t, err)
	return c
}

// fakeSource mirrors windows-gmsa's fake client: dummy contents for the
// dummy name, contentsOf(name) for any other, unless an override says
// otherwise.
type fakeSource struct {
	mu       sync.Mutex
	calls    []string
	override func(name string) (string, error)
}

func (s *fakeSource) Contents(_ context.Context, name string) (string, error) {
	s.mu.Lock()
	s.calls = append(s.calls, name)
	s.mu.Unlock()
	if s.override != nil {
		return s.override(name)
	}
	if name == dummyCredSpecName {
		return dummyCredSpecContents, nil
	}
	return contentsOf(name), nil
}

// fakeAuthorizer allows everything unless decide says otherwise, and records
// the requests.
type fakeAuthorizer struct {
	mu     sync.Mutex
	calls  []credspec.UseRequest
	decide func(credspec.UseRequest) (credspec.Decision, error)
}

func (a *fakeAuthorizer) AuthorizeUse(_ context.Context, req credspec.UseRequest) (credspec.Decision, error) {
	a.mu.Lock()
	a.calls = append(a.calls, req)
	a.mu.Unlock()
	if a.decide != nil {
		return a.decide(req)
	}
	return credspec.Decision{Allowed: true}, nil
}

func denyName(name, reason string) func(credspec.UseRequest) (credspec.Decision, error) {
	return func(r credspec.UseRequest) (credspec.Decision, error) {
		if r.Name == name {
			return credspec.Decision{Reason: reason}, nil
		}
		return credspec.Decision{Allowed: true}, nil
	}
}

func notFound(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound, Message: msg}}
}

// extraMode says what settings the extra containers of a fixture carry.
type extraMode int

const (
	// extrasNameAndContents: valid name and matching contents (validate,
	// update).
	extrasNameAndContents extraMode = iota
	// extrasNameOnly: a name only (mutate).
	extrasNameOnly
)

// fixture is one instance of windows-gmsa's harness: a pod with a target
// level (starting as an empty, non-nil windowsOptions) and extra containers
// with valid settings, shuffled.
type fixture struct {
	pod    *corev1.Pod
	target *corev1.WindowsSecurityContextOptions
	level  credspec.Level
	extras []credspec.Level
}

func newFixture(kind credspec.LevelKind, extras int, mode extraMode, rng *mrand.Rand) *fixture {
	f := &fixture{
		pod: &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: dummyPodName, Namespace: dummyNamespace},
			Spec:       corev1.PodSpec{ServiceAccountName: dummyServiceAccountName},
		},
		target: &corev1.WindowsSecurityContextOptions{},
	}
	var containers []corev1.Container
	for i := range extras {
		name := fmt.Sprintf("extra-container-%d", i)
		specName := name + "-cred-spec"
		o := &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: &specName}
		if mode == extrasNameAndContents {
			o.GMSACredentialSpec = new(contentsOf(specName))
		}
		containers = append(containers, corev1.Container{Name: name, Image: "image", SecurityContext: &corev1.SecurityContext{WindowsOptions: o}})
	}
	target := corev1.Container{Name: dummyContainerName, Image: "image", SecurityContext: &corev1.SecurityContext{WindowsOptions: f.target}}
	switch kind {
	case credspec.LevelPod:
		f.pod.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: f.target}
		f.level = credspec.Level{Kind: credspec.LevelPod, Name: dummyPodName, Index: -1}
	case credspec.LevelContainer:
		containers = append(containers, target)
	case credspec.LevelInitContainer:
		f.pod.Spec.InitContainers = []corev1.Container{target}
		f.level = credspec.Level{Kind: kind, Name: dummyContainerName, Index: 0}
	case credspec.LevelEphemeralContainer:
		f.pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon(target)}}
		f.level = credspec.Level{Kind: kind, Name: dummyContainerName, Index: 0}
	}
	rng.Shuffle(len(containers), func(i, j int) { containers[i], containers[j] = containers[j], containers[i] })
	if len(containers) == 0 {
		containers = []corev1.Container{{Name: "plain", Image: "image"}}
	}
	f.pod.Spec.Containers = containers
	for i, c := range containers {
		switch {
		case c.Name == dummyContainerName:
			f.level = credspec.Level{Kind: credspec.LevelContainer, Name: c.Name, Index: i}
		case c.SecurityContext != nil:
			f.extras = append(f.extras, credspec.Level{Kind: credspec.LevelContainer, Name: c.Name, Index: i})
		}
	}
	return f
}

// targetKinds are the levels the harness targets: windows-gmsa's pod and
// container, plus init and ephemeral containers.
var targetKinds = []credspec.LevelKind{credspec.LevelPod, credspec.LevelContainer, credspec.LevelInitContainer, credspec.LevelEphemeralContainer}

// forEachFixture runs fn for 0-5 extra containers x every target kind, as
// windows-gmsa's runWebhookValidateOrMutateTests does, with a fixed seed.
func forEachFixture(t *testing.T, mode extraMode, fn func(t *testing.T, f *fixture)) {
	t.Helper()
	rng := mrand.New(mrand.NewPCG(1, 2))
	for _, kind := range targetKinds {
		for extras := range 6 {
			f := newFixture(kind, extras, mode, rng)
			t.Run(fmt.Sprintf("%s/extras=%d", kind, extras), func(t *testing.T) { fn(t, f) })
		}
	}
}

func newValidator(t testing.TB, src credspec.Source, authz credspec.Authorizer) *credspec.Validator {
	t.Helper()
	v, err := credspec.NewValidator(credspec.ValidatorConfig{Source: src, Authorizer: authz})
	require.NoError(t, err)
	return v
}

func newExpander(t testing.TB, opts credspec.ExpanderConfig) *credspec.Expander {
	t.Helper()
	e, err := credspec.NewExpander(opts)
	require.NoError(t, err)
	return e
}

// requireDenial asserts err is a *Denial with the code, sentinel and message
// (contained, as windows-gmsa's tests assert).
func requireDenial(t *testing.T, err error, code int32, sentinel error, msg string) *credspec.Denial {
	t.Helper()
	require.Error(t, err)
	var d *credspec.Denial
	require.ErrorAs(t, err, &d)
	require.Equal(t, code, d.Code, d.Message)
	require.ErrorIs(t, err, sentinel)
	require.Contains(t, d.Message, msg)
	return d
}

// testCert is a self-signed ECDSA certificate for localhost and 127.0.0.1.
type testCert struct {
	certPEM, keyPEM []byte
	cert            *x509.Certificate
}

func newTestCert(t testing.TB, serial int64) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return testCert{
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		cert:    cert,
	}
}

// applyPatch applies the expander's "add" operations to a copy of pod, as
// the API server would.
func applyPatch(t testing.TB, pod *corev1.Pod, patch credspec.Patch) *corev1.Pod {
	t.Helper()
	raw, err := json.Marshal(pod)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	for _, op := range patch {
		require.Equal(t, "add", op.Op)
		segs := strings.Split(strings.TrimPrefix(op.Path, "/"), "/")
		var cur any = doc
		for _, seg := range segs[:len(segs)-1] {
			switch c := cur.(type) {
			case map[string]any:
				next, ok := c[seg]
				require.True(t, ok, "missing %q in %s", seg, op.Path)
				cur = next
			case []any:
				i, err := strconv.Atoi(seg)
				require.NoError(t, err)
				require.Less(t, i, len(c), op.Path)
				cur = c[i]
			default:
				t.Fatalf("cannot descend into %T at %s", cur, op.Path)
			}
		}
		m, ok := cur.(map[string]any)
		require.True(t, ok, op.Path)
		m[segs[len(segs)-1]] = op.Value
	}
	raw, err = json.Marshal(doc)
	require.NoError(t, err)
	var out corev1.Pod
	require.NoError(t, json.Unmarshal(raw, &out))
	return &out
}

func fullSpec() *credspec.CredentialSpec {
	return &credspec.CredentialSpec{
		CMSPlugins: []string{"ActiveDirectory"},
		DomainJoinConfig: &credspec.DomainJoinConfig{
			DNSName: "contoso.com", DNSTreeName: "contoso.com", GUID: "244818ae-87ca-4fcd-92ec-e79e5252348a",
			MachineAccountName: "WebApp01", NetBIOSName: "CONTOSO", SID: "S-1-5-21-1",
		},
		ActiveDirectoryConfig: &credspec.ActiveDirectoryConfig{
			GroupManagedServiceAccounts: []credspec.GroupManagedServiceAccount{{Name: "WebApp01", Scope: "contoso.com"}, {Name: "WebApp01", Scope: "CONTOSO"}},
			HostAccountConfig:           &credspec.HostAccountConfig{PluginGUID: "{CCC2A336-D7F3-4818-A213-272B7924213E}", PluginInput: "ObjectId=x;SecretUri=y", PortableCCGVersion: "1"},
		},
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return b
}

func newTestHandler(t testing.TB, opts credspec.HandlerConfig) *credspec.Handler {
	t.Helper()
	h, err := credspec.NewHandler(opts)
	require.NoError(t, err)
	return h
}

func fullHandler(t testing.TB) *credspec.Handler {
	t.Helper()
	src := &fakeSource{}
	return newTestHandler(t, credspec.HandlerConfig{
		Expander:  newExpander(t, credspec.ExpanderConfig{Source: src}),
		Validator: newValidator(t, src, &fakeAuthorizer{}),
	})
}
