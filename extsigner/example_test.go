package extsigner_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/tokens"
)

// Sign claims in process, as the Sign call of kube-apiserver's signer
// does: the header, claims and signature make a token that validates with
// the keys the ring publishes; claims that are not JSON are refused. (The
// grpcserver package serves the ring to kube-apiserver.)
func ExampleRing_Sign() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader) // or a KMS key
	ring, err := extsigner.NewRing(extsigner.RingConfig{
		Keys: []extsigner.RingKey{{Signer: key, Role: extsigner.RolePrimary}},
	})
	if err != nil {
		panic(err)
	}
	now := time.Now().Truncate(time.Second)
	claims := &tokens.Claims{
		Issuer: "https://kubernetes.default.svc.cluster.local", Subject: "system:serviceaccount:billing:api",
		Audience: []string{"vault"}, IssuedAt: now, NotBefore: now, Expiry: now.Add(time.Hour),
		Kubernetes: &tokens.KubernetesClaims{Namespace: "billing", ServiceAccount: ksa.ObjectRef{Name: "api", UID: "0d5a2f0e"}},
	}
	payload := base64.RawURLEncoding.EncodeToString(claims.AppendJSON(nil))
	ctx := context.Background()
	signed, err := ring.Sign(ctx, payload)
	if err != nil {
		panic(err)
	}
	token := signed.Header + "." + payload + "." + signed.Signature

	src, _ := jwks.NewStaticSource(ring.KeySet().Keys...)
	v, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{claims.Issuer}, Keys: src, Audiences: []string{"vault"}, SkipObjectCheck: true,
	})
	if err != nil {
		panic(err)
	}
	res, err := v.Validate(ctx, token)
	if err != nil {
		panic(err)
	}
	fmt.Println("valid:", res.UserInfo().Username, "signed by the primary:", signed.KeyID == ring.Primary().KeyID)

	_, err = ring.Sign(ctx, "bm90IGpzb24") // "not json"
	fmt.Println("not JSON refused:", errors.Is(err, extsigner.ErrInvalidClaims))
	// Output:
	// valid: system:serviceaccount:billing:api signed by the primary: true
	// not JSON refused: true
}

// A rotation, step by step, on a clock the example moves: each step taken
// too early is refused with the time it becomes safe.
func ExampleRing_Promote() {
	now := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	oldKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ring, err := extsigner.NewRing(extsigner.RingConfig{
		Keys:             []extsigner.RingKey{{Signer: oldKey, Role: extsigner.RolePrimary}},
		RefreshHint:      time.Minute,
		MaxTokenLifetime: 24 * time.Hour,
		Now:              clock,
	})
	if err != nil {
		panic(err)
	}
	old := ring.Primary().KeyID

	// 1. Stage the new key: published, not signing.
	newKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	next, err := ring.Stage(newKey, "")
	if err != nil {
		panic(err)
	}

	// 2. Promote it once every kube-apiserver and relying party can know it.
	var rerr *extsigner.RotationError
	if err := ring.Promote(next.KeyID); errors.As(err, &rerr) {
		fmt.Println("promote:", errors.Is(err, extsigner.ErrTooEarly), "safe from", rerr.ReadyAt.Format(time.TimeOnly))
	}
	now = now.Add(ring.MinStaging())
	if err := ring.Promote(next.KeyID); err != nil {
		panic(err)
	}
	fmt.Println("the new key signs:", ring.Primary().KeyID == next.KeyID)

	// 3. Retire the old key once every token it signed has expired.
	if err := ring.Retire(old); errors.As(err, &rerr) {
		fmt.Println("retire:", errors.Is(err, extsigner.ErrTooEarly), "safe from", rerr.ReadyAt.Format(time.DateTime))
	}
	now = rerr.ReadyAt
	if err := ring.Retire(old); err != nil {
		panic(err)
	}
	fmt.Println("published keys:", len(ring.KeySet().Keys))
	// Output:
	// promote: true safe from 09:02:00
	// the new key signs: true
	// retire: true safe from 2027-03-02 09:04:01
	// published keys: 1
}

// A ring file written in advance: the ring follows it on its clock,
// switching keys at the written times, as every replica reading the same
// file does. Keys are opened by the program's keystore.Opener, here one
// that hands out keys it holds.
func ExampleParseRingFile() {
	file := []byte(`{
	  "maxTokenLifetime": "1h",
	  "keys": [
	    {"key": "kms:sa-1", "primary": "2027-01-01T00:00:00Z", "retired": "2027-03-01T10:04:01Z"},
	    {"key": "kms:sa-2", "published": "2027-03-01T09:00:00Z", "primary": "2027-03-01T09:02:00Z"}
	  ]
	}`)
	f, err := extsigner.ParseRingFile(file)
	if err != nil {
		panic(err)
	}
	sa1, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sa2, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	held := map[string]crypto.Signer{"kms:sa-1": sa1, "kms:sa-2": sa2}
	opener := keystore.OpenerFunc(func(_ context.Context, ref string) (crypto.Signer, error) {
		if k, ok := held[ref]; ok {
			return k, nil
		}
		return nil, fmt.Errorf("no key %s", ref)
	})
	cfg, err := f.Open(context.Background(), opener)
	if err != nil {
		panic(err)
	}
	now := time.Date(2027, 3, 1, 8, 0, 0, 0, time.UTC)
	cfg.Now = func() time.Time { return now }
	ring, err := extsigner.NewRing(cfg)
	if err != nil {
		panic(err)
	}
	day := func(h, m, s int) time.Time { return time.Date(2027, 3, 1, h, m, s, 0, time.UTC) }
	for _, now = range []time.Time{day(8, 0, 0), day(9, 0, 0), day(9, 2, 0), day(10, 4, 1)} {
		set := ring.KeySet()
		fmt.Printf("%s: %d keys, %s signs, data timestamp %s\n", now.Format(time.TimeOnly), len(set.Keys), ring.Primary().Algorithm, set.DataTimestamp.Format(time.TimeOnly))
	}

	_, err = extsigner.ParseRingFile([]byte(`{"keys":[{"key":"kms:sa-1","primary":"2027-01-01T00:00:00Z","retired":"2027-01-01T12:00:00Z"}]}`))
	fmt.Println(errors.Is(err, extsigner.ErrInvalidRingFile), err)
	// Output:
	// 08:00:00: 1 keys, ES256 signs, data timestamp 00:00:00
	// 09:00:00: 2 keys, ES256 signs, data timestamp 09:00:00
	// 09:02:00: 2 keys, ES384 signs, data timestamp 09:00:00
	// 10:04:01: 1 keys, ES384 signs, data timestamp 10:04:01
	// true extsigner: ring file keys[0].retired: is set on the last key that signs: no key would sign after it; schedule the next primary first, and retire this key once the tokens it signed have expired
}

// A signer keeps its ring in step with its ring file: a changed file is
// applied whole, a file refused leaves the ring as it was (and is tried
// again later), and each attempt is reported, for the signer's log and
// metrics. Watch checks the file every interval; here the checks are
// made by hand.
func ExampleNewRingFileWatcher() {
	dir, err := os.MkdirTemp("", "ring-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	keyFile := func(name string, curve elliptic.Curve) string {
		key, _ := ecdsa.GenerateKey(curve, rand.Reader)
		der, _ := x509.MarshalPKCS8PrivateKey(key)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			panic(err)
		}
		return path
	}
	sa1, sa2 := keyFile("sa-1.key", elliptic.P256()), keyFile("sa-2.key", elliptic.P384())
	ring := filepath.Join(dir, "ring.json")
	write := func(content string) {
		if err := os.WriteFile(ring, []byte(content), 0o600); err != nil {
			panic(err)
		}
	}
	write(`{"keys":[{"key":"` + sa1 + `","primary":"2027-01-01T00:00:00Z"}]}`)
	now := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	ctx := context.Background()
	w, err := extsigner.NewRingFileWatcher(ctx, extsigner.RingFileWatcherConfig{
		Path: ring, // keys: PEM files (RingFileWatcherConfig.Opener for a key store)
		Now:  func() time.Time { return now },
		OnReload: func(r extsigner.RingReload) {
			if r.Err != nil {
				fmt.Println("refused, the ring unchanged; too early:", errors.Is(r.Err, extsigner.ErrTooEarly))
				return
			}
			fmt.Println("reloaded:", len(r.Keys), "keys")
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("serving", len(w.Ring().KeySet().Keys), "key")

	write(`{"keys":[{"key":"` + sa1 + `","primary":"2027-01-01T00:00:00Z"},{"key":"` + sa2 + `"}]}`)
	_, _ = w.Check(ctx)
	write(`{"keys":[{"key":"` + sa2 + `","primary":"2027-01-01T00:00:00Z"}]}`) // sa-1 withdrawn: its tokens live
	_, _ = w.Check(ctx)
	fmt.Println("serving", len(w.Ring().KeySet().Keys), "keys")
	// Output:
	// serving 1 key
	// reloaded: 2 keys
	// refused, the ring unchanged; too early: true
	// serving 2 keys
}
