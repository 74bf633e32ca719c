package ksa_test

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The code blocks of doc comments compile.
//
// Every indented code block in a doc comment of a package of this module
// (the package comment, and those of declarations and fields) is Go: the
// statements of a function body, copied as a user would copy them. A block
// that is not Go opts out with its first line: "$ " starts a command to
// type in a shell, "# " a caption of a table or other text.
//
// A block may use, without declaring them, the names of docGlossary: the
// values the docs assume a reader holds (ctx, a signer, a raw token...),
// each with one meaning and one type across the module. Anything else it
// uses it declares, or it does not compile.

// docGlossary declares the names doc blocks use without declaring them.
// The clients are stand-ins with client-go's method signatures, which only
// the controller's leaf package (podcertctl) imports.
const docGlossary = `package doccode

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/federation"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/oidc/oidctest"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/rotation"
	"github.com/ksa-go/ksa/tokenreview"
	"github.com/ksa-go/ksa/tokens"
)

var (
	ctx context.Context
	t   *testing.T

	// Keys.
	key, signer, previousSigner, caKey, kmsKey, newKMSKey crypto.Signer
	publicKey, pub                                        crypto.PublicKey
	newKeys                                               []jwks.Key
	keyVersion, oldKeyID, kid                             string
	kms                                                   interface {
		AsymmetricSign(ctx context.Context, keyVersion string, digest []byte) ([]byte, error)
	}

	// Tokens and identities.
	raw, issuer, saUID, podName, podUID string
	sa                                  ksa.ServiceAccount
	requester                           ksa.UserInfo
	getter                              tokens.ObjectGetter
	remote                              *jwks.Remote
	reviewer                            tokenreview.Reviewer
	ring                                *extsigner.Ring

	// Rotations: a schedule, the key IDs each copy of the key set holds,
	// the time.
	sched  *rotation.Schedule
	copies [][]string
	now    time.Time

	// Publishing: a store, rendered documents, where the ring file is
	// kept, what opens its keys and what makes the next one.
	store     publish.Store
	docs      *oidc.Documents
	ringStore publish.RingStore
	opener    keystore.Opener
	newKey    func(context.Context, publish.KeyRequest) (string, error)
	// Pod certificates: a signer, a cluster's client configuration.
	podSigner  *podcert.Signer
	restConfig *rest.Config

	// Servers and clients.
	srv        *oidctest.Server
	h          http.Handler
	httpClient *http.Client
	clientset  interface {
		CoreV1() interface {
			ServiceAccounts(namespace string) interface {
				Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ServiceAccount, error)
				CreateToken(ctx context.Context, name string, tr *authenticationv1.TokenRequest, opts metav1.CreateOptions) (*authenticationv1.TokenRequest, error)
			}
			Pods(namespace string) interface {
				Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Pod, error)
			}
			Secrets(namespace string) interface {
				Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
				Create(ctx context.Context, s *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error)
				Update(ctx context.Context, s *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error)
			}
			Nodes() interface {
				Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error)
			}
		}
		AuthorizationV1() interface {
			LocalSubjectAccessReviews(namespace string) interface {
				Create(ctx context.Context, r *authorizationv1.LocalSubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.LocalSubjectAccessReview, error)
			}
		}
	}

	// Kubernetes objects, certificates.
	objects   []*credspec.GMSACredentialSpec
	pod       *corev1.Pod
	pcr       *certificatesv1.PodCertificateRequest
	obj       *certificatesv1.CertificateSigningRequest
	der       []byte
	bundlePEM []byte
	caCert    *x509.Certificate
	pool      *x509.CertPool
	tlsState  tls.ConnectionState

	// Azure.
	cred         *federation.AzureCredential
	scopes       []string
	subscription string
	armresources struct {
		NewClient func(subscriptionID string, credential azcore.TokenCredential, options *arm.ClientOptions) (*struct{}, error)
	}
)
`

// docImports are the packages doc blocks use without importing them, by
// name.
var docImports = map[string]string{
	"context": "context", "crypto": "crypto", "ecdsa": "crypto/ecdsa", "elliptic": "crypto/elliptic",
	"rand": "crypto/rand", "rsa": "crypto/rsa", "x509": "crypto/x509", "tls": "crypto/tls", "errors": "errors", "fmt": "fmt",
	"http": "net/http", "os": "os", "time": "time", "testing": "testing",

	"ksa": "github.com/ksa-go/ksa", "clusterapi": "github.com/ksa-go/ksa/clusterapi", "credspec": "github.com/ksa-go/ksa/credspec", "extsigner": "github.com/ksa-go/ksa/extsigner",
	"signertest": "github.com/ksa-go/ksa/extsigner/signertest", "federation": "github.com/ksa-go/ksa/federation",
	"entratest": "github.com/ksa-go/ksa/federation/entratest", "golangjwt": "github.com/ksa-go/ksa/golangjwt",
	"jwks": "github.com/ksa-go/ksa/jwks", "jwxkeys": "github.com/ksa-go/ksa/jwxkeys", "keystore": "github.com/ksa-go/ksa/keystore", "keystoretest": "github.com/ksa-go/ksa/keystore/keystoretest",
	"pkcs11": "github.com/ksa-go/ksa/keystore/pkcs11", "awskms": "github.com/ksa-go/ksa/keystore/awskms", "cloudkms": "github.com/ksa-go/ksa/keystore/cloudkms", "azurekms": "github.com/ksa-go/ksa/keystore/azurekms", "ksaprom": "github.com/ksa-go/ksa/ksaprom",
	"kubeapi": "github.com/ksa-go/ksa/kubeapi", "oidc": "github.com/ksa-go/ksa/oidc", "oidctest": "github.com/ksa-go/ksa/oidc/oidctest",
	"podcert": "github.com/ksa-go/ksa/podcert", "tokenreview": "github.com/ksa-go/ksa/tokenreview", "tokens": "github.com/ksa-go/ksa/tokens",
	"x509sa": "github.com/ksa-go/ksa/x509sa", "grpcserver": "github.com/ksa-go/ksa/extsigner/grpcserver",
	"podcerttest": "github.com/ksa-go/ksa/podcert/podcerttest", "rotation": "github.com/ksa-go/ksa/rotation", "workloadapi": "github.com/ksa-go/ksa/podcert/workloadapi",
	"publish": "github.com/ksa-go/ksa/publish", "azblob": "github.com/ksa-go/ksa/publish/azblob", "s3": "github.com/ksa-go/ksa/publish/s3", "gcs": "github.com/ksa-go/ksa/publish/gcs",
	"podcertctl": "github.com/ksa-go/ksa/podcert/podcertctl", "clientgo": "github.com/ksa-go/ksa/podcert/podcertctl/clientgo",
	"register": "github.com/ksa-go/ksa/federation/register", "json": "encoding/json",
	"capiflow": "github.com/ksa-go/ksa/examples/capi/capiflow", "admissionauth": "github.com/ksa-go/ksa/admissionauth",
	"credprovider": "github.com/ksa-go/ksa/credprovider", "tokenexchange": "github.com/ksa-go/ksa/credprovider/tokenexchange", "providerconfig": "github.com/ksa-go/ksa/credprovider/providerconfig", "registrytoken": "github.com/ksa-go/ksa/credprovider/registrytoken",

	"jwt": "github.com/golang-jwt/jwt/v5", "policy": "github.com/Azure/azure-sdk-for-go/sdk/azcore/policy",
	"prometheus": "github.com/prometheus/client_golang/prometheus", "promhttp": "github.com/prometheus/client_golang/prometheus/promhttp",
	"metav1": "k8s.io/apimachinery/pkg/apis/meta/v1", "kubernetes": "k8s.io/client-go/kubernetes", "slog": "log/slog", "authenticationv1": "k8s.io/api/authentication/v1",
	"authorizationv1": "k8s.io/api/authorization/v1", "corev1": "k8s.io/api/core/v1", "certificatesv1": "k8s.io/api/certificates/v1",
}

// docBlock is a code block of a doc comment.
type docBlock struct {
	file string // relative to the module root
	line int    // of the block's first line
	text string
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// isGo reports whether a block is Go, by its first line.
func (b docBlock) isGo() bool {
	first, _, _ := strings.Cut(b.text, "\n")
	return !strings.HasPrefix(first, "$ ") && !strings.HasPrefix(first, "# ")
}

// docBlocks returns the code blocks of the doc comments of every package
// of the module (not of other modules below it, not of tests).
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	var blocks []docBlock
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "." {
				return nil
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(src), "\n")
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		// ast.Inspect visits doc comments (of the file, declarations,
		// specs and fields), not the other comments.
		ast.Inspect(f, func(n ast.Node) bool {
			cg, ok := n.(*ast.CommentGroup)
			if !ok {
				return true
			}
			for _, c := range new(comment.Parser).Parse(cg.Text()).Content {
				if code, ok := c.(*comment.Code); ok {
					// The line of the block's first line, from the comment's.
					first, _, _ := strings.Cut(code.Text, "\n")
					line := fset.Position(cg.Pos()).Line
					for i := line - 1; i < len(lines); i++ {
						if strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "//")) == strings.TrimSpace(first) {
							line = i + 1
							break
						}
					}
					blocks = append(blocks, docBlock{file: filepath.ToSlash(path), line: line, text: code.Text})
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	return blocks
}

// docSource wraps a block in a function of package doccode, importing the
// packages it names and using the names it declares, with a line directive
// pointing at the comment.
func docSource(b docBlock, i int) (string, error) {
	body := b.text
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package p\nfunc _() error {\n"+body+"\n}", 0)
	if err != nil {
		return "", err
	}
	declared := map[string]bool{}
	var top []string
	fn := f.Decls[0].(*ast.FuncDecl)
	for _, st := range fn.Body.List {
		if _, loop := st.(*ast.RangeStmt); loop {
			continue // its names are the loop's
		}
		for _, name := range definedNames(st) {
			if !slices.Contains(top, name) {
				top = append(top, name)
			}
		}
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if st, ok := n.(ast.Stmt); ok {
			for _, name := range definedNames(st) {
				declared[name] = true
			}
		}
		if lit, ok := n.(*ast.FuncLit); ok {
			for _, fl := range lit.Type.Params.List {
				for _, name := range fl.Names {
					declared[name.Name] = true
				}
			}
		}
		return true
	})
	var imports []string
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && !declared[id.Name] && docImports[id.Name] != "" && !slices.Contains(imports, id.Name) {
				imports = append(imports, id.Name)
			}
		}
		return true
	})
	var src strings.Builder
	src.WriteString("package doccode\n\nimport (\n")
	for _, name := range imports {
		fmt.Fprintf(&src, "\t%s %q\n", name, docImports[name])
	}
	fmt.Fprintf(&src, ")\n\nfunc block%d() error {\n//line %s:%d\n%s\n", i, b.file, b.line, body)
	for _, name := range top {
		fmt.Fprintf(&src, "\t_ = %s\n", name)
	}
	src.WriteString("\treturn nil\n}\n")
	return src.String(), nil
}

// definedNames returns the names a statement declares in its scope.
func definedNames(st ast.Stmt) []string {
	var names []string
	add := func(e ast.Expr) {
		if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
			names = append(names, id.Name)
		}
	}
	switch s := st.(type) {
	case *ast.AssignStmt:
		if s.Tok == token.DEFINE {
			for _, e := range s.Lhs {
				add(e)
			}
		}
	case *ast.DeclStmt:
		if gd, ok := s.Decl.(*ast.GenDecl); ok {
			for _, spec := range gd.Specs {
				if vs, ok := spec.(*ast.ValueSpec); ok {
					for _, id := range vs.Names {
						add(id)
					}
				}
			}
		}
	case *ast.RangeStmt:
		if s.Tok == token.DEFINE {
			add(s.Key)
			if s.Value != nil {
				add(s.Value)
			}
		}
	}
	return names
}

// TestDocCodeCompiles builds every Go code block of the doc comments, as
// a function of a package written inside the module (so that internal
// packages resolve) and removed afterwards.
func TestDocCodeCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a package with the go command")
	}
	blocks := docBlocks(t)
	require.NotEmpty(t, blocks)
	dir, err := os.MkdirTemp("internal", "doccode")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "glossary.go"), []byte(docGlossary), 0o600))
	compiled := 0
	for i, b := range blocks {
		if !b.isGo() {
			continue
		}
		src, err := docSource(b, i)
		if !assertNoDocError(t, b, err) {
			continue
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("block%d.go", i)), []byte(src), 0o600))
		compiled++
	}
	cmd := exec.Command("go", "build", "-o", os.DevNull, "./"+filepath.ToSlash(dir))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("doc code blocks do not compile:\n%s", out)
	}
	t.Logf("%d Go code blocks of %d compiled", compiled, len(blocks))
}

// assertNoDocError reports a block that does not parse as statements.
func assertNoDocError(t *testing.T, b docBlock, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("%s: code block is not Go statements (start it with \"# \" if it is not Go): %v\n%s", b, err, b.text)
		return false
	}
	return true
}

// TestDocBlocksOptOut: the opt-out markers, and the blocks they skip.
func TestDocBlocksOptOut(t *testing.T) {
	for _, tc := range []struct {
		text string
		isGo bool
	}{
		{text: "x, err := f()\n", isGo: true},
		{text: "$ go run ./examples/quickstart\n"},
		{text: "# the members\nRSA: n, e\n"},
		{text: "#include\n", isGo: true},
	} {
		require.Equal(t, tc.isGo, docBlock{text: tc.text}.isGo(), tc.text)
	}
}
