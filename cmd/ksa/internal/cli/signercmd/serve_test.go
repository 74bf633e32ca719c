package signercmd

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// TestSignerServe runs ksa signer serve as kube-apiserver meets it: over
// its Unix socket, Metadata and FetchKeys answer with the key of --key,
// and the command stops cleanly when its context ends (as on SIGTERM).
func TestSignerServe(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "signer.sock")
	keyFile, err := filepath.Abs("../../../testdata/keys/ec.key")
	require.NoError(t, err)
	var stderr bytes.Buffer
	a := &base.App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr}
	root := base.NewRoot(a, "", "", New(a))
	root.SetArgs([]string{"signer", "serve", "--socket", sock, "--key", keyFile, "--max-token-lifetime", "2h"})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	client := externaljwtv1.NewExternalJWTSignerClient(conn)
	md, err := client.Metadata(t.Context(), &externaljwtv1.MetadataRequest{}, grpc.WaitForReady(true))
	require.NoError(t, err)
	assert.EqualValues(t, 7200, md.GetMaxTokenExpirationSeconds())

	keys, err := client.FetchKeys(t.Context(), &externaljwtv1.FetchKeysRequest{})
	require.NoError(t, err)
	require.Len(t, keys.GetKeys(), 1)
	pubs, err := keystore.LoadPublicKeysFile("../../../testdata/keys/ec.pub")
	require.NoError(t, err)
	want, err := jwks.NewKey(pubs[0])
	require.NoError(t, err)
	assert.Equal(t, want.KeyID, keys.GetKeys()[0].GetKeyId())

	cancel()
	require.NoError(t, <-done)
	assert.Contains(t, stderr.String(), "msg=serving socket="+sock+" kid="+want.KeyID+" alg=ES256")
}
