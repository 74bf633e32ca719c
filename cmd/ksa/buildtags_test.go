package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyStoreTags leave every key-store backend out of ksa.
const keyStoreTags = "ksa_noawskms,ksa_nocloudkms,ksa_noazurekms,ksa_nopkcs11"

// keyStoreSDKs are module paths only a key-store backend links.
var keyStoreSDKs = []string{
	"go.step.sm/crypto", "github.com/aws/aws-sdk-go-v2/service/kms", "cloud.google.com/go/kms", "github.com/Azure/azure-sdk-for-go/sdk/security/keyvault",
	"github.com/ThalesGroup/crypto11", "github.com/miekg/pkcs11",
}

// TestBuildTags: built with every key-store tag, ksa links none of the key
// stores' SDKs (the default build links all four) and its key-store
// package says of each how to get it back; built without cgo, it says
// that PKCS #11 needs cgo.
func TestBuildTags(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	deps := func(env []string, args ...string) string {
		cmd := exec.Command(goTool, append([]string{"list", "-deps"}, append(args, ".")...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	all := deps(nil)
	for _, sdk := range keyStoreSDKs {
		assert.True(t, strings.Contains(all, sdk), "the default build links %s", sdk)
	}
	none := deps(nil, "-tags", keyStoreTags)
	for _, sdk := range keyStoreSDKs {
		assert.False(t, strings.Contains(none, sdk), "-tags %s links %s", keyStoreTags, sdk)
	}
	assert.False(t, strings.Contains(deps([]string{"CGO_ENABLED=0"}), "github.com/miekg/pkcs11"), "without cgo, PKCS #11 is left out")
	// With the publishing stores' tags too, ksa links no cloud SDK at all:
	// key files and local folders only.
	filesOnly := deps(nil, "-tags", keyStoreTags+",ksa_noazblob,ksa_nos3,ksa_nogcs")
	for _, sdk := range []string{"github.com/aws/", "cloud.google.com/", "github.com/Azure/", "google.golang.org/api/", "go.step.sm/"} {
		assert.False(t, strings.Contains(filesOnly, sdk), "every store's tag: %s linked", sdk)
	}

	for _, run := range []struct {
		env  []string
		args []string
	}{
		{args: []string{"-tags", keyStoreTags, "-run", "^TestBuiltWithout$"}},
		{env: []string{"CGO_ENABLED=0"}, args: []string{"-run", "^TestBuiltWithoutCgo$"}},
	} {
		cmd := exec.Command(goTool, append(append([]string{"test", "-count=1", "-v"}, run.args...), "./internal/keystores")...)
		cmd.Env = append(os.Environ(), run.env...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "--- PASS: "+strings.Trim(run.args[len(run.args)-1], "^$"), "%s", out)
	}
}
