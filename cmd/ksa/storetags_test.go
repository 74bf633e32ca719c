package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storeSDKs are the module paths each store's build tag leaves out.
var storeSDKs = map[string][]string{
	"ksa_noazblob": {"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"},
	"ksa_nos3":     {"github.com/aws/aws-sdk-go-v2/service/s3"},
	"ksa_nogcs":    {"cloud.google.com/go/storage"},
}

// TestStoreTagsLeaveTheSDKsOut lists the command's dependencies with each
// store's build tag: the tag leaves that store's SDK out, and only it;
// with all three no storage SDK is linked, and the stubs compile.
func TestStoreTagsLeaveTheSDKsOut(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	deps := func(tags string) string {
		out, err := exec.Command(goTool, "list", "-deps", "-tags", tags, ".").CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	linked := func(all, pkg string) bool {
		return strings.Contains(all, "\n"+pkg+"\n") || strings.HasPrefix(all, pkg+"\n")
	}
	all := deps("")
	for tag := range storeSDKs {
		got := deps(tag)
		for other, otherPkgs := range storeSDKs {
			for _, p := range otherPkgs {
				assert.True(t, linked(all, p), "%s is linked by default", p)
				assert.Equal(t, other != tag, linked(got, p), "-tags %s: %s linked", tag, p)
			}
		}
	}
	none := deps("ksa_noazblob,ksa_nos3,ksa_nogcs")
	for _, p := range []string{"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob", "github.com/aws/aws-sdk-go-v2/service/s3", "cloud.google.com/go/storage"} {
		assert.False(t, linked(none, p), "%s linked with every store left out", p)
	}
	out, err := exec.Command(goTool, "vet", "-tags", "ksa_noazblob,ksa_nos3,ksa_nogcs", "./internal/stores").CombinedOutput()
	require.NoError(t, err, "the stubs: %s", out)
}
