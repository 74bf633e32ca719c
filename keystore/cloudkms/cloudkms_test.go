package cloudkms_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/kms/apiv1/kmspb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/cloudkms"
	"github.com/ksa-go/ksa/keystore/internal/storetest"
	"github.com/ksa-go/ksa/keystore/keystoretest"
)

// fakeCloudKMS is the part of Google Cloud KMS's gRPC API that opening,
// creating and signing use, over software keys: versions by name.
type fakeCloudKMS struct {
	kmspb.UnimplementedKeyManagementServiceServer
	mu       sync.Mutex
	versions map[string]fakeVersion
}

type fakeVersion struct {
	key crypto.Signer
	alg kmspb.CryptoKeyVersion_CryptoKeyVersionAlgorithm
}

func (f *fakeCloudKMS) GetPublicKey(_ context.Context, r *kmspb.GetPublicKeyRequest) (*kmspb.PublicKey, error) {
	f.mu.Lock()
	v, ok := f.versions[r.Name]
	f.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "CryptoKeyVersion %s not found.", r.Name)
	}
	der, err := x509.MarshalPKIXPublicKey(v.key.Public())
	if err != nil {
		return nil, err
	}
	return &kmspb.PublicKey{Name: r.Name, Algorithm: v.alg, Pem: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}, nil
}

func (f *fakeCloudKMS) AsymmetricSign(_ context.Context, r *kmspb.AsymmetricSignRequest) (*kmspb.AsymmetricSignResponse, error) {
	f.mu.Lock()
	v, ok := f.versions[r.Name]
	f.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "CryptoKeyVersion %s not found.", r.Name)
	}
	digest, h := r.GetDigest().GetSha256(), crypto.SHA256
	if d := r.GetDigest().GetSha384(); d != nil {
		digest, h = d, crypto.SHA384
	}
	var opts crypto.SignerOpts = h
	if v.alg == kmspb.CryptoKeyVersion_RSA_SIGN_PSS_2048_SHA256 {
		opts = &rsa.PSSOptions{Hash: h, SaltLength: rsa.PSSSaltLengthEqualsHash}
	}
	sig, err := v.key.Sign(rand.Reader, digest, opts)
	return &kmspb.AsymmetricSignResponse{Name: r.Name, Signature: sig}, err
}

func (f *fakeCloudKMS) GetKeyRing(_ context.Context, r *kmspb.GetKeyRingRequest) (*kmspb.KeyRing, error) {
	return &kmspb.KeyRing{Name: r.Name}, nil
}

func (f *fakeCloudKMS) CreateCryptoKey(_ context.Context, r *kmspb.CreateCryptoKeyRequest) (*kmspb.CryptoKey, error) {
	alg := r.CryptoKey.VersionTemplate.Algorithm
	var key crypto.Signer
	var err error
	switch alg {
	case kmspb.CryptoKeyVersion_EC_SIGN_P256_SHA256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case kmspb.CryptoKeyVersion_RSA_SIGN_PKCS1_2048_SHA256:
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	default:
		return nil, status.Errorf(codes.InvalidArgument, "algorithm %v", alg)
	}
	if err != nil {
		return nil, err
	}
	name := r.Parent + "/cryptoKeys/" + r.CryptoKeyId
	f.mu.Lock()
	f.versions[name+"/cryptoKeyVersions/1"] = fakeVersion{key: key, alg: alg}
	f.mu.Unlock()
	return &kmspb.CryptoKey{Name: name}, nil
}

// startFakeCloudKMS serves a fake Cloud KMS on loopback and returns the
// client options that point the real Cloud KMS client at it.
func startFakeCloudKMS(t *testing.T, f *fakeCloudKMS) []option.ClientOption {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	kmspb.RegisterKeyManagementServiceServer(srv, f)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return []option.ClientOption{option.WithEndpoint(l.Addr().String()), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))}
}

const ring = "projects/p-1/locations/global/keyRings/ksa"

// TestConformance runs the key stores' shared checks on the real Cloud
// KMS client and go.step.sm against a fake Cloud KMS: the wiring, not the
// service (which is not reachable here).
func TestConformance(t *testing.T) {
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	fake := &fakeCloudKMS{versions: map[string]fakeVersion{
		ring + "/cryptoKeys/sa/cryptoKeyVersions/1": {key: p256, alg: kmspb.CryptoKeyVersion_EC_SIGN_P256_SHA256},
	}}
	store, err := cloudkms.NewStore(cloudkms.Config{ClientOptions: startFakeCloudKMS(t, fake), MaxCalls: 4})
	require.NoError(t, err)
	n := 0
	keystoretest.Run(t, keystoretest.Config{
		Opener: store,
		Keys:   []keystoretest.Key{{Ref: "cloudkms:" + ring + "/cryptoKeys/sa/cryptoKeyVersions/1", Public: p256.Public()}},
		NewKey: func(keystore.KeySpec) string {
			n++
			return fmt.Sprintf("cloudkms:%s/cryptoKeys/new-%d", ring, n)
		},
		Missing:    "cloudkms:" + ring + "/cryptoKeys/sa/cryptoKeyVersions/2",
		Goroutines: 16,
	})
}

// TestCloudKMS opens, signs with and creates Cloud KMS keys through the
// real Cloud KMS client and go.step.sm, against a fake Cloud KMS.
func TestCloudKMS(t *testing.T) {
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	pss, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	fake := &fakeCloudKMS{versions: map[string]fakeVersion{
		ring + "/cryptoKeys/sa/cryptoKeyVersions/1":  {key: p256, alg: kmspb.CryptoKeyVersion_EC_SIGN_P256_SHA256},
		ring + "/cryptoKeys/pss/cryptoKeyVersions/1": {key: pss, alg: kmspb.CryptoKeyVersion_RSA_SIGN_PSS_2048_SHA256},
	}}
	s, err := cloudkms.NewStore(cloudkms.Config{ClientOptions: startFakeCloudKMS(t, fake)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })

	signer, err := s.Open(t.Context(), "cloudkms:"+ring+"/cryptoKeys/sa/cryptoKeyVersions/1")
	require.NoError(t, err)
	assert.True(t, p256.PublicKey.Equal(signer.Public()))
	storetest.Verify(t, signer)

	t.Run("RSA-PSS version refused", func(t *testing.T) {
		_, err := s.Open(t.Context(), "cloudkms:"+ring+"/cryptoKeys/pss/cryptoKeyVersions/1")
		storetest.StoreErr(t, err, keystore.ErrKeyStore, "signs with SHA256-RSAPSS")
	})
	t.Run("missing version", func(t *testing.T) {
		_, err := s.Open(t.Context(), "cloudkms:"+ring+"/cryptoKeys/sa/cryptoKeyVersions/2")
		storetest.StoreErr(t, err, keystore.ErrKeyStore, "Google Cloud KMS has no key version "+ring+"/cryptoKeys/sa/cryptoKeyVersions/2")
	})
	t.Run("create", func(t *testing.T) {
		for _, spec := range []keystore.KeySpec{{Curve: elliptic.P256()}, {RSA: true, Bits: 2048}} {
			name := "new-" + strings.ReplaceAll(strings.ToLower(spec.String()), " ", "-")
			c, err := s.Create(t.Context(), "cloudkms:"+ring+"/cryptoKeys/"+name, spec)
			require.NoError(t, err)
			assert.Equal(t, "cloudkms:"+ring+"/cryptoKeys/"+name+"/cryptoKeyVersions/1", c.Ref)
			signer, err := s.Open(t.Context(), c.Ref)
			require.NoError(t, err)
			storetest.Verify(t, signer)
		}
		_, err := s.Create(t.Context(), "cloudkms:"+ring+"/cryptoKeys/p521", keystore.KeySpec{Curve: elliptic.P521()})
		storetest.StoreErr(t, err, keystore.ErrKeyStore, "Google Cloud KMS does not make ECDSA P-521 keys")
	})
}
