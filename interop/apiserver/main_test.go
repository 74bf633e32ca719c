// Package apiserver_test proves tokens and discovery against real
// kube-apiservers, each test on every release of controlplane.Versions
// (one control plane per release, started once for the package by
// interop/controlplane):
// TokenRequest tokens validate with ksa and stop validating when their pod
// is deleted; tokens ksa mints with the server's key pass its TokenReview;
// ksa's relying party discovers the server's issuer, from outside and from
// a pod's point of view (anonymous requests off); TokenReview after local
// validation notices a deleted pod that local validation alone cannot; the server's documents
// are byte-identical to ksa's; the warnafter extension comes out as ksa
// predicts; x509sa client certificates authenticate as the service account;
// and ksa's GMSA webhook, registered with the server, admits and refuses pods
// as windows-gmsa's end-to-end cases expect.
package apiserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/ksa-go/ksa/interop/controlplane"
)

const vaultAudience = "vault"

var shared controlplane.Shared

// The control plane signs with an ECDSA key we generate, so tests can mint
// with it too.
var signingKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)

// clientCA is a CA of ours that kube-apiserver trusts for client
// certificates (--client-ca-file): x509sa issues with it.
var clientCA, clientCAKey = newClientCA()

func newClientCA() (*x509.Certificate, *ecdsa.PrivateKey) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "ksa workload CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		panic(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return cert, key
}

func TestMain(m *testing.M) {
	os.Exit(shared.Run(m, controlplane.Config{
		SigningKey:   signingKey,
		APIAudiences: []string{controlplane.DefaultIssuer, vaultAudience},
		ClientCAs:    []*x509.Certificate{clientCA},
		// Discovery must work without anonymous requests (in-cluster
		// relying parties authenticate with their pod's token).
		ExtraArgs: []string{"--anonymous-auth=false"},
	}))
}
