package extsigner_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
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
