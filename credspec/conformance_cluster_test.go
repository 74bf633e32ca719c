package credspec_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/podcert"
)

// expectedCredSpec0 is the contents windows-gmsa's integration tests expect
// inlined for credspec-0.
const expectedCredSpec0 = `{"ActiveDirectoryConfig":{"GroupManagedServiceAccounts":[{"Name":"WebApplication0","Scope":"CONTOSO"},{"Name":"WebApplication0","Scope":"contoso.com"}]},"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com","DnsTreeName":"contoso.com","Guid":"244818ae-87ca-4fcd-92ec-e79e5252348a","MachineAccountName":"WebApplication0","NetBiosName":"CONTOSO","Sid":"S-1-5-21-2126729477-2524075714-3094792973"}}`

const expectedCredSpecWithHostAccountConfig = `{"ActiveDirectoryConfig":{"GroupManagedServiceAccounts":[{"Name":"WebApplication0","Scope":"CONTOSO"},{"Name":"WebApplication0","Scope":"contoso.com"}],"HostAccountConfig":{"PluginGUID":"{GDMA0342-266A-4D1P-831J-20990E82944F}","PluginInput":"contoso.com:gmsaccg:\u003cpassword\u003e","PortableCcgVersion":"1"}},"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com","DnsTreeName":"contoso.com","Guid":"244818ae-87ca-4fcd-92ec-e79e5252348a","MachineAccountName":"WebApplication0","NetBiosName":"CONTOSO","Sid":"S-1-5-21-2126729477-2524075714-3094792973"}}`

// cluster emulates what windows-gmsa's kind-cluster tests exercise: the
// objects of testdata, RBAC granting use per service account, and the
// mutating then validating webhook in front of the pod.
type cluster struct {
	source *credspec.StaticSource
	rbac   map[string][]string // username -> names it may use
	exp    *credspec.Expander
	val    *credspec.Validator
}

func newCluster(t testing.TB, random bool) *cluster {
	t.Helper()
	var objs []*credspec.GMSACredentialSpec
	for _, f := range []string{"credspec-0.yml", "credspec-1.yml", "credspec-2.yml", "credspec-with-hostaccountconfig.yml"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		require.NoError(t, err)
		o, err := credspec.Decode(data)
		require.NoError(t, err)
		objs = append(objs, o)
	}
	src, err := credspec.NewStaticSource(objs...)
	require.NoError(t, err)
	c := &cluster{source: src, rbac: map[string][]string{}}
	authz := credspec.AuthorizerFunc(func(_ context.Context, r credspec.UseRequest) (credspec.Decision, error) {
		return credspec.Decision{Allowed: slices.Contains(c.rbac[r.User.Username], r.Name)}, nil
	})
	c.exp = newExpander(t, credspec.ExpanderConfig{Source: src, RandomHostname: random})
	c.val = newValidator(t, src, authz)
	return c
}

func (c *cluster) grant(sa string, names ...string) {
	u := ksa.ServiceAccount{Namespace: "default", Name: sa}.Username()
	c.rbac[u] = append(c.rbac[u], names...)
}

// create runs a pod through both webhooks and returns it as stored.
func (c *cluster) create(t *testing.T, pod *corev1.Pod) (*corev1.Pod, error) {
	t.Helper()
	patch, err := c.exp.ExpandCreate(t.Context(), pod)
	if err != nil {
		return nil, err
	}
	stored := applyPatch(t, pod, patch)
	if err := c.val.ValidateCreate(t.Context(), "default", stored, nil); err != nil {
		return nil, err
	}
	return stored, nil
}

func (c *cluster) update(t *testing.T, pod, old *corev1.Pod) error {
	t.Helper()
	if _, err := c.exp.ExpandUpdate(t.Context(), pod, old); err != nil {
		return err
	}
	return c.val.ValidateUpdate(t.Context(), "default", pod, old, nil)
}

func gmsaPod(sa string, podOpts *corev1.WindowsSecurityContextOptions, containers ...corev1.Container) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       corev1.PodSpec{ServiceAccountName: sa, Containers: containers},
	}
	if podOpts != nil {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: podOpts}
	}
	return p
}

func nginx(name string, opts *corev1.WindowsSecurityContextOptions) corev1.Container {
	c := corev1.Container{Name: name, Image: "nginx"}
	if opts != nil {
		c.SecurityContext = &corev1.SecurityContext{WindowsOptions: opts}
	}
	return c
}

func named(name string) *corev1.WindowsSecurityContextOptions {
	return &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new(name)}
}

func withContents(name, contents string) *corev1.WindowsSecurityContextOptions {
	return &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new(name), GMSACredentialSpec: new(contents)}
}

func contentsOnly(contents string) *corev1.WindowsSecurityContextOptions {
	return &corev1.WindowsSecurityContextOptions{GMSACredentialSpec: new(contents)}
}

func effectiveByName(t *testing.T, pod *corev1.Pod) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range credspec.EffectiveSpecs(pod) {
		out[e.Container.Name] = e.CredentialSpec()
	}
	return out
}

// TestConformanceCluster holds the library to windows-gmsa's end-to-end
// cases (its integration tests on a kind cluster), with the cluster
// replaced by the mutate -> patch -> validate sequence the API server runs.
func TestConformanceCluster(t *testing.T) {
	contents := func(t *testing.T, c *cluster, name string) string {
		v, err := c.source.Contents(t.Context(), name)
		require.NoError(t, err)
		return v
	}
	tests := []struct {
		name string
		run  func(t *testing.T, c *cluster)
	}{
		{name: "33_pod_level_name_inlines_canonical_contents", run: func(t *testing.T, c *cluster) {
			c.grant("sa", "credspec-0")
			pod, err := c.create(t, gmsaPod("sa", named("credspec-0"), nginx("nginx", nil)))
			require.NoError(t, err)
			assert.Equal(t, expectedCredSpec0, *pod.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec)
			assert.Equal(t, expectedCredSpec0, effectiveByName(t, pod)["nginx"])
		}},
		{name: "34_container_level_name_inlines_contents", run: func(t *testing.T, c *cluster) {
			c.grant("sa", "credspec-0")
			pod, err := c.create(t, gmsaPod("sa", nil, nginx("nginx", named("credspec-0"))))
			require.NoError(t, err)
			assert.Equal(t, expectedCredSpec0, *pod.Spec.Containers[0].SecurityContext.WindowsOptions.GMSACredentialSpec)
		}},
		{name: "35_several_containers_and_v1alpha1_object", run: func(t *testing.T, c *cluster) {
			c.grant("sa", "credspec-0", "credspec-1", "credspec-2")
			pod, err := c.create(t, gmsaPod("sa", named("credspec-1"),
				nginx("nginx0", named("credspec-0")), nginx("nginx1", nil), nginx("nginx2", named("credspec-2"))))
			require.NoError(t, err)
			assert.Equal(t, map[string]string{
				"nginx0": contents(t, c, "credspec-0"),
				"nginx1": contents(t, c, "credspec-1"),
				"nginx2": contents(t, c, "credspec-2"),
			}, effectiveByName(t, pod))
		}},
		{name: "36_preset_matching_contents_kept_as_written", run: func(t *testing.T, c *cluster) {
			c.grant("sa", "credspec-0")
			preset := `{"DomainJoinConfig":{"Sid":"S-1-5-21-2126729477-2524075714-3094792973","NetBiosName":"CONTOSO","MachineAccountName":"WebApplication0","Guid":"244818ae-87ca-4fcd-92ec-e79e5252348a","DnsTreeName":"contoso.com","DnsName":"contoso.com"},
			  "CmsPlugins": ["ActiveDirectory"],
			  "ActiveDirectoryConfig": {"GroupManagedServiceAccounts": [{"Scope":"CONTOSO","Name":"WebApplication0"},{"Scope":"contoso.com","Name":"WebApplication0"}]}}`
			pod, err := c.create(t, gmsaPod("sa", withContents("credspec-0", preset), nginx("nginx", nil)))
			require.NoError(t, err)
			got := *pod.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec
			assert.Equal(t, preset, got)
			assert.NotEqual(t, expectedCredSpec0, got)
		}},
		{name: "37_service_account_without_binding_denied", run: func(t *testing.T, c *cluster) {
			_, err := c.create(t, gmsaPod("unbound", named("credspec-0"), nginx("nginx", nil)))
			requireDenial(t, err, http.StatusForbidden, credspec.ErrNotAuthorized,
				"service account \"unbound\" is not authorized to `use` GMSA cred spec \"credspec-0\"")
		}},
		{name: "38_missing_object_denied", run: func(t *testing.T, c *cluster) {
			c.grant("sa", "i-sure-dont-exist")
			_, err := c.create(t, gmsaPod("sa", named("i-sure-dont-exist"), nginx("nginx", nil)))
			requireDenial(t, err, http.StatusNotFound, credspec.ErrNotFound, "cred spec i-sure-dont-exist does not exist")
		}},
		{name: "39_pod_contents_without_name_denied", run: func(t *testing.T, c *cluster) {
			_, err := c.create(t, gmsaPod("sa", contentsOnly(expectedCredSpec0), nginx("nginx", nil)))
			requireDenial(t, err, http.StatusUnprocessableEntity, credspec.ErrNameMissing,
				"has a GMSA cred spec set, but does not define the name of the corresponding resource")
		}},
		{name: "40_container_contents_without_name_denied", run: func(t *testing.T, c *cluster) {
			_, err := c.create(t, gmsaPod("sa", nil, nginx("nginx", contentsOnly(expectedCredSpec0))))
			requireDenial(t, err, http.StatusUnprocessableEntity, credspec.ErrNameMissing,
				"has a GMSA cred spec set, but does not define the name of the corresponding resource")
		}},
		{name: "41_contents_of_another_object_denied", run: func(t *testing.T, c *cluster) {
			c.grant("sa", "credspec-0")
			_, err := c.create(t, gmsaPod("sa", withContents("credspec-0", contents(t, c, "credspec-1")), nginx("nginx", nil)))
			requireDenial(t, err, http.StatusUnprocessableEntity, credspec.ErrContentsMismatch,
				`does not match the contents of GMSA resource "credspec-0"`)
		}},
		{name: "42_changing_existing_pod_settings_denied", run: func(t *testing.T, c *cluster) {
			c.grant("sa", "credspec-0", "credspec-1")
			for _, level := range []string{"pod", "container"} {
				var podOpts, cOpts *corev1.WindowsSecurityContextOptions
				if level == "pod" {
					podOpts = named("credspec-0")
				} else {
					cOpts = named("credspec-0")
				}
				old, err := c.create(t, gmsaPod("sa", podOpts, nginx("nginx", cOpts)))
				require.NoError(t, err)
				target := func(p *corev1.Pod) *corev1.WindowsSecurityContextOptions {
					if level == "pod" {
						return p.Spec.SecurityContext.WindowsOptions
					}
					return p.Spec.Containers[0].SecurityContext.WindowsOptions
				}
				changedContents := old.DeepCopy()
				target(changedContents).GMSACredentialSpec = new(contents(t, c, "credspec-1"))
				requireDenial(t, c.update(t, changedContents, old), http.StatusForbidden, credspec.ErrUpdateForbidden, "GMSA contents modified on "+level)
				changedName := old.DeepCopy()
				target(changedName).GMSACredentialSpecName = new("credspec-1")
				requireDenial(t, c.update(t, changedName, old), http.StatusForbidden, credspec.ErrUpdateForbidden, "GMSA name modified on "+level)
			}
		}},
		{name: "43_host_account_config_inlined_html_escaped", run: func(t *testing.T, c *cluster) {
			c.grant("sa", "credspec-hostaccountconfig")
			pod, err := c.create(t, gmsaPod("sa", named("credspec-hostaccountconfig"), nginx("nginx", nil)))
			require.NoError(t, err)
			assert.Equal(t, expectedCredSpecWithHostAccountConfig, *pod.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec)
		}},
		{name: "44_changing_only_the_image_allowed", run: func(t *testing.T, c *cluster) {
			c.grant("sa", "credspec-0")
			old, err := c.create(t, gmsaPod("sa", named("credspec-0"), nginx("nginx", named("credspec-0"))))
			require.NoError(t, err)
			updated := old.DeepCopy()
			updated.Spec.Containers[0].Image = "nginx:1.27"
			assert.NoError(t, c.update(t, updated, old))
		}},
		{name: "45_v1alpha1_and_v1_read_alike", run: func(t *testing.T, c *cluster) {
			v1alpha1, err := os.ReadFile(filepath.Join("testdata", "credspec-1.yml"))
			require.NoError(t, err)
			a, err := credspec.Decode(v1alpha1)
			require.NoError(t, err)
			assert.Equal(t, "windows.k8s.io/v1alpha1", a.APIVersion)
			b, err := credspec.Decode([]byte(strings.Replace(string(v1alpha1), "windows.k8s.io/v1alpha1", "windows.k8s.io/v1", 1)))
			require.NoError(t, err)
			assert.Equal(t, "windows.k8s.io/v1", b.APIVersion)
			require.NotNil(t, a.CredSpec)
			assert.Equal(t, a.CredSpec, b.CredSpec)
			assert.Equal(t, "WebApplication1", a.CredSpec.DomainJoinConfig.MachineAccountName)
		}},
		{name: "46_renewed_certificate_served_without_restart", run: func(t *testing.T, _ *cluster) {
			fx := newCertFiles(t)
			addr := serveTLS(t, fullHandler(t), fx.source(t, nil))
			renewed := fx.write(t, 2)
			assert.Equal(t, renewed.cert.Raw, fx.servedLeaf(t, addr))
			assert.Equal(t, renewed.cert.Raw, fx.servedLeaf(t, addr))
		}},
		{name: "47_random_hostname", run: func(t *testing.T, c *cluster) {
			c.grant("sa", "credspec-0")
			random := newCluster(t, true)
			random.grant("sa", "credspec-0")
			pod, err := random.create(t, gmsaPod("sa", named("credspec-0"), nginx("nginx", nil)))
			require.NoError(t, err)
			assert.Len(t, pod.Spec.Hostname, 15)
			assert.NotEqual(t, "web", pod.Spec.Hostname)

			withHost := gmsaPod("sa", named("credspec-0"), nginx("nginx", nil))
			withHost.Spec.Hostname = "chosen"
			pod, err = random.create(t, withHost)
			require.NoError(t, err)
			assert.Equal(t, "chosen", pod.Spec.Hostname)

			pod, err = random.create(t, gmsaPod("sa", nil, nginx("nginx", nil)))
			require.NoError(t, err)
			assert.Empty(t, pod.Spec.Hostname)

			pod, err = c.create(t, gmsaPod("sa", named("credspec-0"), nginx("nginx", nil)))
			require.NoError(t, err)
			assert.Empty(t, pod.Spec.Hostname)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newCluster(t, false)) })
	}
}

// certFiles is a kubernetes.io/tls Secret's tls.crt and tls.key mounted in
// a directory, which the webhook serves through a podcert.Source.
type certFiles struct {
	certPath, keyPath string
	pool              *x509.CertPool // every certificate written, for clients
}

// newCertFiles writes a first certificate.
func newCertFiles(t *testing.T) *certFiles {
	dir := t.TempDir()
	fx := &certFiles{certPath: filepath.Join(dir, "tls.crt"), keyPath: filepath.Join(dir, "tls.key"), pool: x509.NewCertPool()}
	fx.write(t, 1)
	return fx
}

// write replaces both files with a new certificate and key.
func (fx *certFiles) write(t *testing.T, serial int64) testCert {
	c := newTestCert(t, serial)
	fx.replace(t, fx.keyPath, c.keyPEM)
	fx.replace(t, fx.certPath, c.certPEM)
	fx.pool.AddCert(c.cert)
	return c
}

// replace puts data in path by a rename, as a Secret volume is updated.
func (fx *certFiles) replace(t *testing.T, path string, data []byte) {
	require.NoError(t, os.WriteFile(path+".new", data, 0o600))
	require.NoError(t, os.Rename(path+".new", path))
}

// source is the webhook's certificate source over the files.
func (fx *certFiles) source(t *testing.T, onReload func(error)) *podcert.Source {
	src, err := podcert.NewSource(podcert.SourceConfig{KeyPath: fx.keyPath, ChainPath: fx.certPath, AnyCertificate: true, OnReload: onReload})
	require.NoError(t, err)
	return src
}

// serveTLS serves h over TLS on loopback with the certificate of src and
// returns the address.
func serveTLS(t *testing.T, h http.Handler, src *podcert.Source) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		_ = srv.Serve(tls.NewListener(ln, &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: src.GetCertificate}))
	}()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// servedLeaf opens a new connection to addr and returns the certificate
// the webhook presents (the client trusts every certificate written).
func (fx *certFiles) servedLeaf(t *testing.T, addr string) []byte {
	t.Helper()
	dialer := &tls.Dialer{Config: &tls.Config{RootCAs: fx.pool, MinVersion: tls.VersionTLS12}}
	conn, err := dialer.DialContext(t.Context(), "tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0].Raw
}
