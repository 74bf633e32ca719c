package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// storeTags leave every publishing store's SDK out of ksa.
const storeTags = "ksa_noazblob,ksa_nos3,ksa_nogcs"

// storeSDKs are the packages each store's build tag leaves out.
var storeSDKs = map[string]string{
	"ksa_noazblob": "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob",
	"ksa_nos3":     "github.com/aws/aws-sdk-go-v2/service/s3",
	"ksa_nogcs":    "cloud.google.com/go/storage",
}

// TestStoreTagsLeaveTheSDKsOut lists the command's dependencies with each
// store's build tag: the tag leaves that store's SDK out, and only it;
// with all three no storage SDK is linked, and the stubs pass go vet
// (without cgo, see gotool_test.go).
func TestStoreTagsLeaveTheSDKsOut(t *testing.T) {
	all := linkedPackages(t, buildConfig{})
	for tag := range storeSDKs {
		got := linkedPackages(t, buildConfig{tags: tag})
		for other, sdk := range storeSDKs {
			assert.True(t, all.links(sdk), "%s is linked by default", sdk)
			assert.Equal(t, other != tag, got.links(sdk), "-tags %s: %s linked", tag, sdk)
		}
	}
	none := linkedPackages(t, buildConfig{tags: storeTags})
	for _, sdk := range storeSDKs {
		assert.False(t, none.links(sdk), "%s linked with every store left out", sdk)
	}
	goNoCgo(t, "vet", "-tags", storeTags, "./internal/stores")
}
