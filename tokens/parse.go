package tokens

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/jsonx"
	"github.com/ksa-go/ksa/internal/jws"
)

// DefaultMaxTokenBytes is the size limit on tokens when a validator's
// MaxTokenBytes is zero: 16 KiB, about fifteen times a Kubernetes token with
// several audiences. Larger tokens are refused before any decoding.
const DefaultMaxTokenBytes = 16 << 10

// MaxNumericDate is the latest time claim accepted, 2^33 seconds after the
// epoch (year 2242): beyond any token Kubernetes can mint (2^32 seconds of
// lifetime from now). Larger, negative or non-numeric times are malformed.
const MaxNumericDate = 1 << 33

// maxJSONDepth bounds the nesting of header and claims JSON.
const maxJSONDepth = 16

// header is the protected header of a token.
type header struct {
	alg, kid, typ string
}

// parts are the three segments of a compact JWS, still encoded.
type parts struct {
	header, payload, signature string
	signingInput               string
}

// split checks the compact serialisation: three segments, the header and
// payload not empty. An empty or missing signature segment is left for the
// caller to refuse once it has read the header, so that alg "none" is
// reported as the algorithm it is ([ErrAlgorithmNotAllowed]) rather than as
// a shape.
func split(token string) (parts, error) {
	if rest, ok := cutBearer(token); ok {
		if _, err := split(rest); err == nil {
			return parts{}, malformed("token", `it starts with the "Bearer " scheme of an Authorization header: pass the token alone`, nil)
		}
	}
	if strings.HasPrefix(strings.TrimSpace(token), "{") {
		return parts{}, malformed("token", "JWS JSON serialisation is not accepted", nil)
	}
	h, rest, ok := strings.Cut(token, ".")
	if !ok {
		return parts{}, malformed("token", "not three dot-separated parts", nil)
	}
	p, s, ok := strings.Cut(rest, ".")
	if ok && strings.IndexByte(s, '.') >= 0 {
		return parts{}, malformed("token", "not three dot-separated parts (JWE and nested tokens are not accepted)", nil)
	}
	if h == "" || p == "" {
		return parts{}, malformed("token", "empty part", nil)
	}
	return parts{header: h, payload: p, signature: s, signingInput: token[:len(h)+1+len(p)]}, nil
}

// cutBearer removes an HTTP Authorization scheme ("Bearer ", any case) from
// the front of s.
func cutBearer(s string) (string, bool) {
	const scheme = "bearer "
	if len(s) > len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
		return strings.TrimLeft(s[len(scheme):], " "), true
	}
	return s, false
}

// noSignature refuses a token whose signature segment is empty or missing,
// once its header named an algorithm that needs one.
func noSignature() error { return malformed("signature", "empty or missing", nil) }

// decodePart decodes one segment of a token with the one strict base64url
// decoder of the module.
func decodePart(part, s string, buf []byte) ([]byte, error) {
	out, err := jws.Decode(s, buf)
	if err != nil {
		return nil, malformed(part, "", err)
	}
	return out, nil
}

// ParseUnverified reads a token's claims WITHOUT verifying its signature,
// as strictly as Validate reads them: the compact form with a non-empty
// signature segment, strict unpadded base64url, a strict JSON header with an
// alg, strict JSON claims. The claims tell a client what it is about to send
// (audience, issuer, expiry), never whom to trust. Tokens over
// DefaultMaxTokenBytes are refused before decoding. Errors match
// [ErrMalformed] or [ErrTooLarge].
func ParseUnverified(token string) (*Claims, error) {
	if len(token) > DefaultMaxTokenBytes {
		return nil, tooLarge(len(token), DefaultMaxTokenBytes)
	}
	return parseUnverified(token)
}

// parseUnverified is ParseUnverified without the size limit, for callers
// that bound the input themselves.
func parseUnverified(token string) (*Claims, error) {
	p, err := split(token)
	if err != nil {
		return nil, err
	}
	hdr, err := decodePart("header", p.header, nil)
	if err != nil {
		return nil, err
	}
	if _, err := parseHeader(hdr); err != nil {
		return nil, err
	}
	if p.signature == "" {
		return nil, noSignature()
	}
	if _, err := decodePart("signature", p.signature, nil); err != nil {
		return nil, err
	}
	payload, err := decodePart("claims", p.payload, nil)
	if err != nil {
		return nil, err
	}
	return ParseClaims(payload)
}

// parseHeader reads the protected header strictly: alg required; kid and
// typ strings; typ, when present, "JWT"; crit and b64 refused (no extension
// is understood, and none may change what the signature covers); JWE
// members refused; other members (jku, x5u, jwk, x5c, ...) ignored and
// never acted on; no member twice.
func parseHeader(data []byte) (header, error) {
	var h header
	bad := func(reason string, err error) (header, error) {
		return header{}, malformed("header", reason, err)
	}
	r := jsonx.NewReader(data, maxJSONDepth)
	obj, err := r.Object()
	if err != nil {
		return bad("not a JSON object", err)
	}
	var seen uint8
	var others jsonx.Names
	for {
		name, ok, err := obj.Next()
		if err != nil {
			return bad("not strict JSON", err)
		}
		if !ok {
			break
		}
		var bit uint8
		switch string(name) {
		case "alg":
			bit = 1
		case "kid":
			bit = 2
		case "typ":
			bit = 4
		case "crit":
			return bad(`critical extensions ("crit") are not supported`, nil)
		case "b64":
			// RFC 7797: b64 changes what the signature covers (the payload
			// unencoded). Refused whatever its value, as any member that
			// would change the signing input.
			return bad(`the unencoded-payload option ("b64") is not supported`, nil)
		case "enc", "zip", "epk", "apu", "apv":
			return bad("encrypted tokens (JWE) are not accepted", nil)
		default:
			if err := checkUnknownName(name, headerNames[:]); err != nil {
				return bad("member "+strconv.Quote(string(name))+" differs from a registered header only by case", nil)
			}
			if !others.Add(name) {
				return bad("member "+strconv.Quote(string(name))+" appears twice", nil)
			}
			if err := r.Skip(); err != nil {
				return bad("not strict JSON", err)
			}
			continue
		}
		if seen&bit != 0 {
			return bad("member "+strconv.Quote(string(name))+" appears twice", nil)
		}
		seen |= bit
		v, err := r.StringBytes()
		if err != nil {
			return bad("member "+strconv.Quote(string(name))+" is not a string", err)
		}
		switch bit {
		case 1:
			h.alg = jws.Intern(v)
		case 2:
			h.kid = string(v)
		case 4:
			if !strings.EqualFold(string(v), "JWT") {
				return bad("typ "+strconv.Quote(string(v))+` is not "JWT"`, nil)
			}
			h.typ = "JWT"
		}
	}
	if err := r.End(); err != nil {
		return bad("not strict JSON", err)
	}
	if seen&1 == 0 {
		return bad(`no "alg" member`, nil)
	}
	return h, nil
}

// headerNames are the header members whose case variants are refused.
var headerNames = [...]string{"alg", "kid", "typ", "crit", "enc", "zip", "jku", "jwk", "x5u", "x5c", "x5t", "x5t#S256", "cty", "b64"}

// registered claim names, for the duplicate bitmask and the case check.
var claimNames = [...]string{claimAud, claimExp, claimIat, claimIss, claimJti, claimNbf, claimSub, claimKubernetes,
	legacyNamespace, legacySecret, legacySAName, legacySAUID}

// ParseClaims reads a token payload strictly: strict JSON; each claim at most
// once; registered claims of the right type (aud a string or an array of
// strings, times non-negative numbers up to MaxNumericDate, fractions
// truncated); the kubernetes.io claim an object of objects; no unknown claim
// whose name equals a registered one but for case. Unknown claims are
// otherwise skipped. Errors match [ErrMalformed].
func ParseClaims(data []byte) (*Claims, error) {
	blk := &claimsBlock{}
	if err := blk.parse(string(data)); err != nil {
		return nil, err
	}
	return &blk.claims, nil
}

// claimsBlock holds a token's claims and everything they point to, so that
// parsing allocates once.
type claimsBlock struct {
	claims Claims
	k      KubernetesClaims
	legacy LegacyClaims
	refs   [4]ksa.ObjectRef
	nrefs  int
	aud    [2]string
}

func (blk *claimsBlock) newRef() *ksa.ObjectRef {
	if blk.nrefs < len(blk.refs) {
		blk.nrefs++
		return &blk.refs[blk.nrefs-1]
	}
	return &ksa.ObjectRef{}
}

// parse reads the payload; string values share data's memory.
func (blk *claimsBlock) parse(data string) error {
	bad := func(reason string, err error) error {
		// A cause found below (a claim's member, a time) is a bare
		// reason: the error says "malformed token claims" once.
		return malformed("claims", reason, err)
	}
	r := jsonx.NewStringReader(data, maxJSONDepth)
	obj, err := r.Object()
	if err != nil {
		return bad("not a JSON object", err)
	}
	var seen uint16
	var others jsonx.Names
	for {
		name, ok, err := obj.Next()
		if err != nil {
			return bad("not strict JSON", err)
		}
		if !ok {
			break
		}
		idx := -1
		for i, n := range claimNames {
			if string(name) == n {
				idx = i
				break
			}
		}
		if idx < 0 {
			if err := checkUnknownName(name, claimNames[:]); err != nil {
				return bad("", err)
			}
			if !others.Add(name) {
				return bad("claim "+strconv.Quote(string(name))+" appears twice", nil)
			}
			if err := r.Skip(); err != nil {
				return bad("not strict JSON", err)
			}
			continue
		}
		if seen&(1<<idx) != 0 {
			return bad("claim "+strconv.Quote(claimNames[idx])+" appears twice", nil)
		}
		seen |= 1 << idx
		if err := blk.readClaim(&r, claimNames[idx]); err != nil {
			return bad("claim "+strconv.Quote(claimNames[idx]), err)
		}
	}
	if err := r.End(); err != nil {
		return bad("not strict JSON", err)
	}
	return nil
}

// checkUnknownName refuses names that differ from a registered one only by
// case, which case-insensitive JSON decoders would take for it.
func checkUnknownName(name []byte, registered []string) error {
	for _, n := range registered {
		// Unicode folding, not only ASCII: encoding/json matches "ſub"
		// (U+017F) to sub and "Kubernetes.io" (Kelvin sign) to
		// kubernetes.io.
		if n != string(name) && strings.EqualFold(n, string(name)) {
			return errors.New("claim " + strconv.Quote(string(name)) + " differs from " + strconv.Quote(n) + " only by case")
		}
	}
	return nil
}

func (blk *claimsBlock) readClaim(r *jsonx.Reader, name string) error {
	c := &blk.claims
	var err error
	switch name {
	case claimAud:
		c.Audience, err = readAudience(r, blk.aud[:0])
	case claimExp:
		c.Expiry, err = readDate(r)
	case claimIat:
		c.IssuedAt, err = readDate(r)
	case claimNbf:
		c.NotBefore, err = readDate(r)
	case claimIss:
		c.Issuer, err = r.String()
	case claimSub:
		c.Subject, err = r.String()
	case claimJti:
		c.ID, err = r.String()
	case claimKubernetes:
		err = blk.readKubernetes(r)
	default:
		c.Legacy = &blk.legacy
		var v string
		if v, err = r.String(); err != nil {
			return err
		}
		switch name {
		case legacyNamespace:
			c.Legacy.Namespace = v
		case legacySecret:
			c.Legacy.SecretName = v
		case legacySAName:
			c.Legacy.ServiceAccountName = v
		case legacySAUID:
			c.Legacy.ServiceAccountUID = v
		}
	}
	return err
}

// readAudience accepts a string or an array of strings, as RFC 7519 and
// go-jose do.
func readAudience(r *jsonx.Reader, auds []string) ([]string, error) {
	if r.Peek() == '"' {
		s, err := r.String()
		if err != nil {
			return nil, err
		}
		return append(auds, s), nil
	}
	arr, err := r.Array()
	if err != nil {
		return nil, err
	}
	for {
		more, err := arr.Next()
		if err != nil {
			return nil, err
		}
		if !more {
			return auds, nil
		}
		s, err := r.String()
		if err != nil {
			return nil, err
		}
		auds = append(auds, s)
	}
}

// readDate reads a NumericDate: a JSON number in [0, MaxNumericDate],
// fractions truncated.
func readDate(r *jsonx.Reader) (time.Time, error) {
	raw, err := r.Number()
	if err != nil {
		return time.Time{}, err
	}
	v, ok := numericDate(raw)
	if !ok {
		return time.Time{}, errors.New("time " + string(raw) + " is negative or beyond 2^33 seconds")
	}
	return time.Unix(v, 0), nil
}

func numericDate(raw []byte) (int64, bool) {
	var v int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			// Fraction, exponent or sign: the slow, general path.
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil || f < 0 || f > MaxNumericDate {
				return 0, false
			}
			return int64(f), true
		}
		v = v*10 + int64(c-'0')
		if v > MaxNumericDate {
			return 0, false
		}
	}
	return v, true
}

var kubernetesNames = [...]string{"namespace", "serviceaccount", "pod", "secret", "node", "warnafter",
	ClaimValidatingWebhookConfiguration, ClaimMutatingWebhookConfiguration, ClaimAttestations}

func (blk *claimsBlock) readKubernetes(r *jsonx.Reader) error {
	obj, err := r.Object()
	if err != nil {
		return err
	}
	k := &blk.k
	blk.claims.Kubernetes = k
	var seen uint16
	var others jsonx.Names
	for {
		name, ok, err := obj.Next()
		if err != nil || !ok {
			return err
		}
		idx := -1
		for i, n := range kubernetesNames {
			if string(name) == n {
				idx = i
				break
			}
		}
		if idx < 0 {
			if err := checkUnknownName(name, kubernetesNames[:]); err != nil {
				return err
			}
			if !others.Add(name) {
				return errors.New("member " + strconv.Quote(string(name)) + " appears twice")
			}
			if err := r.Skip(); err != nil {
				return err
			}
			continue
		}
		if seen&(1<<idx) != 0 {
			return errors.New("member " + strconv.Quote(kubernetesNames[idx]) + " appears twice")
		}
		seen |= 1 << idx
		switch idx {
		case 0:
			k.Namespace, err = r.String()
		case 1:
			err = readRef(r, &k.ServiceAccount)
		case 2:
			k.Pod = blk.newRef()
			err = readRef(r, k.Pod)
		case 3:
			k.Secret = blk.newRef()
			err = readRef(r, k.Secret)
		case 4:
			k.Node = blk.newRef()
			err = readRef(r, k.Node)
		case 5:
			k.WarnAfter, err = readDate(r)
		case 6:
			k.ValidatingWebhookConfiguration = blk.newRef()
			err = readRef(r, k.ValidatingWebhookConfiguration)
		case 7:
			k.MutatingWebhookConfiguration = blk.newRef()
			err = readRef(r, k.MutatingWebhookConfiguration)
		case 8:
			k.Attestations, err = readAttestations(r)
		}
		if err != nil {
			return err
		}
	}
}

// maxAttestationValues bounds the values of the attestations claim (all
// keys together); Kubernetes writes one.
const maxAttestationValues = 16

// readAttestations reads an object of string arrays (null arrays kept as
// nil), each key at most once, at most maxAttestationValues values.
func readAttestations(r *jsonx.Reader) (map[string][]string, error) {
	obj, err := r.Object()
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	n := 0
	for {
		name, ok, err := obj.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		key := string(name)
		if _, dup := out[key]; dup {
			return nil, errors.New("attestation " + strconv.Quote(key) + " appears twice")
		}
		if err := checkUnknownName(name, []string{AttestationAdmissionReviewAPIGroups}); err != nil {
			return nil, err
		}
		if r.Null() {
			out[key] = nil
			continue
		}
		arr, err := r.Array()
		if err != nil {
			return nil, err
		}
		vals := []string{}
		for {
			more, err := arr.Next()
			if err != nil {
				return nil, err
			}
			if !more {
				break
			}
			if n++; n > maxAttestationValues {
				return nil, errors.New("attestations hold more than " + strconv.Itoa(maxAttestationValues) + " values")
			}
			s, err := r.String()
			if err != nil {
				return nil, err
			}
			vals = append(vals, s)
		}
		out[key] = vals
	}
}

func readRef(r *jsonx.Reader, ref *ksa.ObjectRef) error {
	obj, err := r.Object()
	if err != nil {
		return err
	}
	var seen uint8
	var others jsonx.Names
	for {
		name, ok, err := obj.Next()
		if err != nil || !ok {
			return err
		}
		var dst *string
		var bit uint8
		switch string(name) {
		case "name":
			dst, bit = &ref.Name, 1
		case "uid":
			dst, bit = &ref.UID, 2
		default:
			if err := checkUnknownName(name, []string{"name", "uid"}); err != nil {
				return err
			}
			if !others.Add(name) {
				return errors.New("member " + strconv.Quote(string(name)) + " appears twice")
			}
			if err := r.Skip(); err != nil {
				return err
			}
			continue
		}
		if seen&bit != 0 {
			return errors.New("member " + strconv.Quote(string(name)) + " appears twice")
		}
		seen |= bit
		if *dst, err = r.String(); err != nil {
			return err
		}
	}
}
