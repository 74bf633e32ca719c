package tokens_test

import (
	"context"
	"crypto"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Kubernetes' claims tests run at 2018-01-01T00:00:00Z.
var k8sNow = time.Unix(1514764800, 0)

const (
	testIssuer   = "https://kubernetes.default.svc.cluster.local"
	testAudience = "https://kubernetes.default.svc"
)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// objectStore is an in-memory tokens.ObjectGetter (and LegacySecretGetter).
type objectStore struct {
	objects map[string]tokens.LiveObject
	secrets map[string]tokens.LegacySecret
	err     error // returned for every lookup when set
}

func newObjectStore() *objectStore {
	return &objectStore{objects: map[string]tokens.LiveObject{}, secrets: map[string]tokens.LegacySecret{}}
}

func objectKey(kind tokens.ObjectKind, ns, name string) string {
	return string(kind) + "/" + ns + "/" + name
}

func (s *objectStore) add(kind tokens.ObjectKind, ns, name, uid string) *objectStore {
	s.objects[objectKey(kind, ns, name)] = tokens.LiveObject{UID: uid}
	return s
}

func (s *objectStore) deleting(kind tokens.ObjectKind, ns, name string, at time.Time) *objectStore {
	k := objectKey(kind, ns, name)
	o := s.objects[k]
	o.DeletionTimestamp = at
	s.objects[k] = o
	return s
}

func (s *objectStore) GetObject(_ context.Context, kind tokens.ObjectKind, ns, name string) (tokens.LiveObject, error) {
	if s.err != nil {
		return tokens.LiveObject{}, s.err
	}
	if o, ok := s.objects[objectKey(kind, ns, name)]; ok {
		return o, nil
	}
	return tokens.LiveObject{}, fmt.Errorf("%s %s/%s: %w", kind, ns, name, tokens.ErrObjectNotFound)
}

func (s *objectStore) GetLegacySecret(_ context.Context, ns, name string) (tokens.LegacySecret, error) {
	if sec, ok := s.secrets[ns+"/"+name]; ok {
		return sec, nil
	}
	return tokens.LegacySecret{}, fmt.Errorf("secret %s/%s: %w", ns, name, tokens.ErrObjectNotFound)
}

func mustMinter(t testing.TB, signer crypto.Signer, mod ...func(*tokens.MinterConfig)) *tokens.Minter {
	t.Helper()
	cfg := tokens.MinterConfig{
		Issuer:       testIssuer,
		Signer:       signer,
		APIAudiences: []string{testAudience},
		Now:          fixedClock(k8sNow),
		NewJTI:       func() string { return "fixed" },
	}
	for _, m := range mod {
		m(&cfg)
	}
	m, err := tokens.NewMinter(cfg)
	require.NoError(t, err)
	return m
}

func mustValidator(t testing.TB, keys jwks.KeySource, mod ...func(*tokens.ValidatorConfig)) *tokens.Validator {
	t.Helper()
	cfg := tokens.ValidatorConfig{
		Issuers:         []string{testIssuer},
		Keys:            keys,
		Audiences:       []string{testAudience},
		SkipObjectCheck: true,
		Now:             fixedClock(k8sNow),
	}
	for _, m := range mod {
		m(&cfg)
	}
	v, err := tokens.NewValidator(cfg)
	require.NoError(t, err)
	return v
}

// mustSource builds a static source from jwks.Keys and any other keys
// jwks.NewKey accepts.
func mustSource(t testing.TB, keys ...any) *jwks.StaticSource {
	t.Helper()
	list := make([]jwks.Key, 0, len(keys))
	for _, k := range keys {
		key, ok := k.(jwks.Key)
		if !ok {
			var err error
			key, err = jwks.NewKey(k)
			require.NoError(t, err)
		}
		list = append(list, key)
	}
	s, err := jwks.NewStaticSource(list...)
	require.NoError(t, err)
	return s
}

var testSA = ksa.ServiceAccount{Namespace: "myns", Name: "mysvcacct", UID: "mysvcacct-uid"}

// payloadOf returns the decoded payload of a compact token.
func payloadOf(t testing.TB, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	return string(b)
}

func headerOf(t testing.TB, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	b, err := base64.RawURLEncoding.DecodeString(parts[0])
	require.NoError(t, err)
	return string(b)
}

// b64 encodes a string as a token segment.
func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
