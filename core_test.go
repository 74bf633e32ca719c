package ksa_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	// Linked in so that a change to a core package's imports changes this
	// test binary, and go test's cache cannot answer for it.
	_ "github.com/ksa-go/ksa/credprovider"
	_ "github.com/ksa-go/ksa/credprovider/providerconfig"
	_ "github.com/ksa-go/ksa/credprovider/registrytoken"
	_ "github.com/ksa-go/ksa/credprovider/tokenexchange"
	_ "github.com/ksa-go/ksa/extsigner"
	_ "github.com/ksa-go/ksa/federation/register"
	_ "github.com/ksa-go/ksa/jwks"
	_ "github.com/ksa-go/ksa/keystore"
	_ "github.com/ksa-go/ksa/keystore/keystoretest"
	_ "github.com/ksa-go/ksa/oidc"
	_ "github.com/ksa-go/ksa/oidc/oidctest"
	_ "github.com/ksa-go/ksa/podcert"
	_ "github.com/ksa-go/ksa/podcert/podcerttest"
	_ "github.com/ksa-go/ksa/publish"
	_ "github.com/ksa-go/ksa/publish/publishtest"
	_ "github.com/ksa-go/ksa/rotation"
	_ "github.com/ksa-go/ksa/tokenreview"
	_ "github.com/ksa-go/ksa/tokens"
	_ "github.com/ksa-go/ksa/x509sa"
)

// corePackages are the packages a relying party, an issuer, a workload
// with a certificate or the external signer's ring imports (its gRPC server
// is a leaf package), the rotation model they share, and publishing an
// issuer (each cloud's store is a leaf package): they must build
// with the standard library alone (ARCHITECTURE.md, ring 1).
var corePackages = []string{
	"github.com/ksa-go/ksa",
	"github.com/ksa-go/ksa/jwks",
	"github.com/ksa-go/ksa/keystore",
	"github.com/ksa-go/ksa/keystore/keystoretest",
	"github.com/ksa-go/ksa/tokens",
	"github.com/ksa-go/ksa/oidc",
	"github.com/ksa-go/ksa/oidc/oidctest",
	"github.com/ksa-go/ksa/tokenreview",
	"github.com/ksa-go/ksa/x509sa",
	"github.com/ksa-go/ksa/podcert",
	"github.com/ksa-go/ksa/podcert/podcerttest",
	"github.com/ksa-go/ksa/extsigner",
	"github.com/ksa-go/ksa/credprovider",
	"github.com/ksa-go/ksa/credprovider/tokenexchange",
	"github.com/ksa-go/ksa/credprovider/providerconfig",
	"github.com/ksa-go/ksa/credprovider/registrytoken",
	"github.com/ksa-go/ksa/rotation",
	"github.com/ksa-go/ksa/publish",
	"github.com/ksa-go/ksa/publish/publishtest",
	"github.com/ksa-go/ksa/federation/register",
}

// TestCoreImportsOnlyTheStandardLibrary lists the dependencies of the core
// packages with the go command and fails on any module other than this
// one.
func TestCoreImportsOnlyTheStandardLibrary(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	args := append([]string{"list", "-deps", "-f", "{{with .Module}}{{.Path}} {{end}}{{.ImportPath}}"}, corePackages...)
	out, err := exec.Command(goTool, args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var outside []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		module, pkg, ok := strings.Cut(line, " ")
		if ok && module != "github.com/ksa-go/ksa" {
			outside = append(outside, pkg+" (module "+module+")")
		}
	}
	assert.Empty(t, outside, "core packages import packages from modules outside the standard library")
}

// keyStoreLeaves are the key-store packages of ring 2 (ARCHITECTURE.md),
// each with the module paths only it links: a program importing one
// builds none of the others' clients.
var keyStoreLeaves = map[string][]string{
	"github.com/ksa-go/ksa/keystore/pkcs11":   {"github.com/miekg/pkcs11", "github.com/ThalesGroup/crypto11"},
	"github.com/ksa-go/ksa/keystore/awskms":   {"github.com/aws/aws-sdk-go-v2/service/kms"},
	"github.com/ksa-go/ksa/keystore/cloudkms": {"cloud.google.com/go/kms"},
	"github.com/ksa-go/ksa/keystore/azurekms": {"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault"},
}

// TestKeyStoreLeavesLinkTheirOwn lists each key-store package's
// dependencies with the go command: its own client is there, and no other
// key store's.
func TestKeyStoreLeavesLinkTheirOwn(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	for leaf := range keyStoreLeaves {
		out, err := exec.Command(goTool, "list", "-deps", leaf).CombinedOutput()
		require.NoError(t, err, "%s", out)
		deps := string(out)
		for other, theirs := range keyStoreLeaves {
			for _, m := range theirs {
				assert.Equal(t, other == leaf, strings.Contains(deps, m+"\n") || strings.Contains(deps, m+"/"), "%s links %s", leaf, m)
			}
			if other != leaf {
				assert.NotContains(t, deps, other+"\n", "%s imports %s", leaf, other)
			}
		}
	}
}

// TestInternalImportsRunDown: the module's internal packages import the
// standard library, other modules (testify for test helpers) and each
// other, never a package above them (jwks, tokens, ...): imports run one
// way, down into internal/.
func TestInternalImportsRunDown(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	const module = "github.com/ksa-go/ksa"
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", "./internal/...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var above []string
	for _, pkg := range strings.Fields(string(out)) {
		if (pkg == module || strings.HasPrefix(pkg, module+"/")) && !strings.HasPrefix(pkg, module+"/internal/") {
			above = append(above, pkg)
		}
	}
	assert.Empty(t, above, "internal packages import packages above them")
}
