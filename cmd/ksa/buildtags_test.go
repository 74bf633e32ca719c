package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
// package says of each how to get it back; built without cgo, it links no
// PKCS #11 and says that PKCS #11 needs cgo. The builds leave the cloud
// key stores out, which they do not concern, and run without cgo (see
// gotool_test.go).
func TestBuildTags(t *testing.T) {
	all := linkedPackages(t, buildConfig{})
	for _, sdk := range keyStoreSDKs {
		assert.True(t, all.links(sdk), "the default build links %s", sdk)
	}
	none := linkedPackages(t, buildConfig{tags: keyStoreTags})
	for _, sdk := range keyStoreSDKs {
		assert.False(t, none.links(sdk), "-tags %s links %s", keyStoreTags, sdk)
	}
	assert.False(t, linkedPackages(t, buildConfig{env: noCgo}).links("github.com/miekg/pkcs11"), "without cgo, PKCS #11 is left out")
	// With the publishing stores' tags too, ksa links no cloud SDK at all:
	// key files and local folders only.
	filesOnly := linkedPackages(t, buildConfig{tags: keyStoreTags + "," + storeTags})
	for _, sdk := range []string{"github.com/aws/", "cloud.google.com/", "github.com/Azure/", "google.golang.org/api/", "go.step.sm/"} {
		assert.False(t, filesOnly.links(sdk), "every store's tag: %s linked", sdk)
	}

	for _, run := range []struct{ tags, test string }{
		{tags: keyStoreTags, test: "TestBuiltWithout"},
		{tags: "ksa_noawskms,ksa_nocloudkms,ksa_noazurekms", test: "TestBuiltWithoutCgo"},
	} {
		out := goNoCgo(t, "test", "-count=1", "-v", "-tags", run.tags, "-run", "^"+run.test+"$", "./internal/keystores")
		assert.True(t, strings.Contains(out, "--- PASS: "+run.test+" "), "-tags %s: %s did not run:\n%s", run.tags, run.test, out)
	}
}
