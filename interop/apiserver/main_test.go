// Package apiserver_test proves tokens and discovery against a real
// kube-apiserver (started once for the package by interop/controlplane):
// TokenRequest tokens validate with ksa and stop validating when their pod
// is deleted; tokens ksa mints with the server's key pass its TokenReview;
// ksa's relying party discovers the server's issuer; the server's documents
// are byte-identical to ksa's; and the warnafter extension comes out as
// ksa predicts.
package apiserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"os"
	"testing"

	"github.com/ksa-go/ksa/interop/controlplane"
)

const vaultAudience = "vault"

var shared controlplane.Shared

// The control plane signs with an ECDSA key we generate, so tests can mint
// with it too.
var signingKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)

func TestMain(m *testing.M) {
	os.Exit(shared.Run(m, controlplane.Config{
		SigningKey:   signingKey,
		APIAudiences: []string{controlplane.DefaultIssuer, vaultAudience},
	}))
}
