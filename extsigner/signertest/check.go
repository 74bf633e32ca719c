package signertest

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jsonx"
	"github.com/ksa-go/ksa/internal/jws"
	"github.com/ksa-go/ksa/jwks"
)

// The checks a client makes of a signer's answers, as kube-apiserver
// makes them (a failure matches ErrKubernetes) and stricter (ErrStrict).

// minExpirationSeconds is the smallest max_token_expiration_seconds
// kube-apiserver accepts from Metadata.
const minExpirationSeconds = int64(extsigner.MinMaxTokenLifetime / time.Second)

// maxSeconds is the most seconds kube-apiserver's arithmetic holds in a
// refresh hint or a token lifetime, 2^32.
const maxSeconds = int64(extsigner.MaxMaxTokenLifetime / time.Second)

// maxJSONDepth bounds the nesting of a header.
const maxJSONDepth = 4

// refusal is a check's failure: "<part>: <reason>: <cause>", matching
// ErrKubernetes when kube-apiserver makes the check too (kube), ErrStrict
// otherwise.
func refusal(kube bool, part, reason string, cause error) error {
	kind := ErrStrict
	if kube {
		kind = ErrKubernetes
	}
	if reason != "" {
		part += ": " + reason
	}
	return errs.Wrap(prefix, kind, part, cause)
}

// Header is a decoded external signer's JWT header.
type Header struct {
	Algorithm string // alg
	KeyID     string // kid
	Type      string // typ, always "JWT"
}

// CheckHeader checks a header as a Sign answer gives it (base64url) with
// kube-apiserver's rules (only alg, kid and typ; typ "JWT"; kid of 1 to
// extsigner.MaxKeyIDBytes bytes; alg allowed) and the stricter ones it
// skips: strict unpadded base64url, strict JSON with each member exactly
// once, spelled exactly (kube-apiserver's JSON decoder matches names
// whatever their case, keeps the last of a repeated member and ignores
// trailing data). Errors match [ErrKubernetes] when kube-apiserver refuses
// the header too, [ErrStrict] when only the stricter rules do.
func CheckHeader(header string) (Header, error) {
	h, reason, err := strictHeader(header)
	if reason == "" && err == nil {
		return h, nil
	}
	return Header{}, refusal(kubernetesHeader(header) != nil, "header", reason, err)
}

// strictHeader parses a header by ksa's rules; reason and err are both
// empty when it passes.
func strictHeader(header string) (h Header, reason string, err error) {
	data, err := jws.Decode(header, nil)
	if err != nil {
		return h, "", err
	}
	r := jsonx.NewReader(data, maxJSONDepth)
	obj, err := r.Object()
	if err != nil {
		return h, "not a JSON object", err
	}
	var seen [3]bool
	for {
		name, ok, err := obj.Next()
		if err != nil {
			return h, "not strict JSON", err
		}
		if !ok {
			break
		}
		var i int
		var dst *string
		switch string(name) {
		case "alg":
			i, dst = 0, &h.Algorithm
		case "kid":
			i, dst = 1, &h.KeyID
		case "typ":
			i, dst = 2, &h.Type
		default:
			return h, "member " + strconv.Quote(string(name)) + " is not alg, kid or typ", nil
		}
		if seen[i] {
			return h, "member " + strconv.Quote(string(name)) + " appears twice", nil
		}
		seen[i] = true
		if *dst, err = r.String(); err != nil {
			return h, "member " + strconv.Quote(string(name)) + " is not a string", err
		}
	}
	if err := r.End(); err != nil {
		return h, "not strict JSON", err
	}
	switch {
	case h.Type != "JWT":
		return h, fmt.Sprintf("typ %q is not \"JWT\"", h.Type), nil
	case h.KeyID == "":
		return h, "no kid", nil
	case len(h.KeyID) > extsigner.MaxKeyIDBytes:
		return h, fmt.Sprintf("kid of %d bytes, more than %d", len(h.KeyID), extsigner.MaxKeyIDBytes), nil
	case !extsigner.AllowedAlgorithm(h.Algorithm):
		return h, fmt.Sprintf("alg %q is not RS256, ES256, ES384 or ES512", h.Algorithm), nil
	}
	return h, "", nil
}

// kubernetesHeader applies kube-apiserver's own header checks (its
// external signer client's), to tell which failures it would catch.
func kubernetesHeader(header string) error {
	data, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var h struct {
		Algorithm string `json:"alg,omitempty"`
		KeyID     string `json:"kid,omitempty"`
		Type      string `json:"typ,omitempty"`
	}
	if err := dec.Decode(&h); err != nil {
		return err
	}
	if h.Type != "JWT" || h.KeyID == "" || len(h.KeyID) > extsigner.MaxKeyIDBytes || !extsigner.AllowedAlgorithm(h.Algorithm) {
		return ErrKubernetes
	}
	return nil
}

// checkSigningKey checks the key a header names against the published key
// set and returns it: kube-apiserver refuses a key excluded from discovery;
// it does not check that the kid is published at all, nor that alg fits the
// key, which ksa does (tokens would fail validation).
func checkSigningKey(h Header, set extsigner.KeySet) (jwks.Key, error) {
	for _, k := range set.Keys {
		if k.KeyID != h.KeyID {
			continue
		}
		if k.ExcludeFromDiscovery {
			return k, refusal(true, "header", fmt.Sprintf("kid %q names a key excluded from discovery", h.KeyID), nil)
		}
		if !jwks.Fits(h.Algorithm, k.Public) {
			return k, refusal(false, "header", fmt.Sprintf("alg %s does not fit the key %q", h.Algorithm, h.KeyID), nil)
		}
		return k, nil
	}
	return jwks.Key{}, refusal(false, "header", fmt.Sprintf("kid %q is not among the published keys", h.KeyID), nil)
}

// checkSignature checks a signature as a Sign answer gives it (base64url)
// over header.claims: kube-apiserver only refuses an empty one; ksa also
// requires strict base64url and a signature that verifies with pub.
func checkSignature(alg string, pub crypto.PublicKey, header, claims, signature string) error {
	if signature == "" {
		return refusal(true, "signature", "empty", nil)
	}
	sig, err := jws.Decode(signature, nil)
	if err != nil {
		return refusal(false, "signature", "", err)
	}
	if err := jws.Verify(alg, pub, header+"."+claims, sig); err != nil {
		return refusal(false, "signature", "rejected by the key", err)
	}
	return nil
}

// rawKey is one key of a FetchKeys answer as it comes over the wire.
type rawKey struct {
	KeyID                string
	DER                  []byte // PKIX SubjectPublicKeyInfo
	ExcludeFromDiscovery bool
}

// rawKeySet is a FetchKeys answer as it comes over the wire.
type rawKeySet struct {
	Keys []rawKey
	// DataTimestamp is zero when the answer has none or an invalid one.
	DataTimestamp      time.Time
	RefreshHintSeconds int64
}

// parseKeySet checks a FetchKeys answer with kube-apiserver's rules
// (refresh hint above zero, at least one key, a data timestamp, each key
// ID of 1 to extsigner.MaxKeyIDBytes bytes, each key a PKIX public key)
// and the stricter ones it skips: no key ID twice, every key one
// kube-apiserver can publish (RSA of jwks.MinRSABits to jwks.MaxRSABits,
// ECDSA P-256, P-384 or P-521), at least one key in discovery. It returns
// the usable keys and every failure.
func parseKeySet(raw rawKeySet) (extsigner.KeySet, error) {
	var list []error
	fail := func(part, reason string, kube bool, err error) {
		list = append(list, refusal(kube, part, reason, err))
	}
	set := extsigner.KeySet{DataTimestamp: raw.DataTimestamp, RefreshHint: time.Duration(raw.RefreshHintSeconds) * time.Second}
	if raw.RefreshHintSeconds <= 0 {
		fail("key set", fmt.Sprintf("refresh hint of %d seconds", raw.RefreshHintSeconds), true, nil)
	} else if raw.RefreshHintSeconds > maxSeconds {
		fail("key set", fmt.Sprintf("refresh hint of %d seconds, more than 2^32", raw.RefreshHintSeconds), false, nil)
	}
	if raw.DataTimestamp.IsZero() {
		fail("key set", "no valid data timestamp", true, nil)
	}
	if len(raw.Keys) == 0 {
		fail("key set", "no keys", true, nil)
	}
	seen := make(map[string]bool, len(raw.Keys))
	discoverable := false
	for i, rk := range raw.Keys {
		part := "key #" + strconv.Itoa(i)
		if rk.KeyID == "" || len(rk.KeyID) > extsigner.MaxKeyIDBytes {
			fail(part, fmt.Sprintf("key ID of %d bytes", len(rk.KeyID)), true, nil)
			continue
		}
		if !utf8.ValidString(rk.KeyID) {
			fail(part, "key ID is not UTF-8", false, nil)
			continue
		}
		if len(rk.DER) == 0 {
			fail(part, "empty key", true, nil)
			continue
		}
		pub, err := x509.ParsePKIXPublicKey(rk.DER)
		if err != nil {
			fail(part, "not a PKIX public key", true, err)
			continue
		}
		if seen[rk.KeyID] {
			fail(part, fmt.Sprintf("key ID %q appears twice", rk.KeyID), false, nil)
			continue
		}
		seen[rk.KeyID] = true
		key, err := jwks.NewKeyWithID(pub, rk.KeyID)
		if err == nil && !extsigner.AllowedAlgorithm(key.Algorithm) {
			err = errs.Wrap(prefix, jwks.ErrUnsupportedKey, key.Algorithm+" keys cannot sign for kube-apiserver", nil)
		}
		if err != nil {
			fail(part, "unusable key", false, err)
			continue
		}
		key.ExcludeFromDiscovery = rk.ExcludeFromDiscovery
		discoverable = discoverable || !rk.ExcludeFromDiscovery
		set.Keys = append(set.Keys, key)
	}
	if len(raw.Keys) > 0 && !discoverable && len(set.Keys) == len(raw.Keys) {
		fail("key set", "every key is excluded from discovery: kube-apiserver cannot publish its discovery documents", false, nil)
	}
	return set, errs.Join(prefix, "FetchKeys answer refused", list)
}

// checkMetadata checks max_token_expiration_seconds of a Metadata answer:
// kube-apiserver refuses to start below minExpirationSeconds; above 2^32
// seconds its arithmetic overflows.
func checkMetadata(maxTokenExpirationSeconds int64) (time.Duration, error) {
	s := maxTokenExpirationSeconds
	if s < minExpirationSeconds {
		return 0, refusal(true, "metadata", fmt.Sprintf("max_token_expiration_seconds %d is below %d", s, minExpirationSeconds), nil)
	}
	if s > maxSeconds {
		return 0, refusal(false, "metadata", fmt.Sprintf("max_token_expiration_seconds %d is above 2^32", s), nil)
	}
	return time.Duration(s) * time.Second, nil
}
