package keyflags

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// File is a key read for publishing or signing: a PEM key file, or a
// key in a key store.
type File struct {
	// Path is the file's path, or the key's reference (without secrets).
	Path string
	// Keys are the public keys in the file, in file order; a key store's
	// one key.
	Keys []jwks.Key
	// Signer is the file's private key, if it holds one; a key store's
	// key.
	Signer crypto.Signer
	// Store: the key is in a key store, which kube-apiserver cannot read.
	Store bool
}

// Fix is the advice for a key file that cannot be used.
const Fix = `pass a PEM key file (RSA 2048 to 8192 bits, or ECDSA P-256, P-384 or P-521), e.g. one that ksa issuer keygen wrote`

// ParseRef reads the key reference a flag gave, as a usage error when
// it is refused.
func ParseRef(ref, flag string, create bool) (keystore.Ref, error) {
	parse := keystore.ParseRef
	if create {
		parse = keystore.ParseNewKeyRef
	}
	r, err := parse(ref)
	if re := (*keystore.RefError)(nil); errors.As(err, &re) {
		what := flag + " " + re.Reason
		if re.Ref != "" {
			what = flag + " " + strconv.Quote(re.Ref) + " " + re.Reason
		}
		return r, base.Usage(re.Fix, "%s", what)
	}
	if err != nil {
		return r, base.Fail(err, base.BugFix, "reading %s", flag)
	}
	return r, nil
}

// Load reads every key of a key reference: of a PEM file as
// kube-apiserver reads --service-account-key-file, and its private key if
// it has one; of a key store, the key. flag names the flag that gave it;
// a file is never written.
func Load(a *base.App, ctx context.Context, ref, flag string) (*File, error) {
	r, err := ParseRef(ref, flag, false)
	if err != nil {
		return nil, err
	}
	if r.Scheme() != keystore.SchemeFile {
		signer, err := openStoreKey(a, ctx, r, flag)
		if err != nil {
			return nil, err
		}
		k, err := jwks.NewKey(signer)
		if err != nil {
			return nil, base.Fail(err, Fix, "%s %s holds a key ksa cannot publish", flag, r)
		}
		return &File{Path: r.String(), Keys: []jwks.Key{k}, Signer: signer, Store: true}, nil
	}
	path := r.Path()
	a.ReadKey(path, flag)
	data, err := base.ReadInput(path, nil, keystore.MaxPEMFileBytes)
	if err != nil {
		return nil, FileError(path, err)
	}
	pubs, err := jwks.ParsePublicKeysPEM(data)
	if err != nil {
		return nil, FileError(path, err)
	}
	kf := &File{Path: path}
	for _, p := range pubs {
		k, err := jwks.NewKey(p)
		if err != nil {
			return nil, FileError(path, err)
		}
		kf.Keys = append(kf.Keys, k)
	}
	if s, err := keystore.ParseSigningKeyPEM(data); err == nil {
		kf.Signer = s
	}
	return kf, nil
}

// LoadSigner opens the private key of a key reference: a PEM file's,
// or a key store's key. flag names the flag that gave it; a file is never
// written.
func LoadSigner(a *base.App, ctx context.Context, ref, flag string) (crypto.Signer, error) {
	r, err := ParseRef(ref, flag, false)
	if err != nil {
		return nil, err
	}
	if r.Scheme() != keystore.SchemeFile {
		return openStoreKey(a, ctx, r, flag)
	}
	path := r.Path()
	a.ReadKey(path, flag)
	data, err := base.ReadInput(path, nil, keystore.MaxPEMFileBytes)
	if err != nil {
		return nil, FileError(path, err)
	}
	s, err := keystore.ParseSigningKeyPEM(data)
	if errors.Is(err, jwks.ErrNoKeys) {
		return nil, base.Fail(nil, "pass the private key file (the one ksa issuer keygen wrote at --out, mode 0600), not the public one", "key file %s holds no private key", path)
	}
	if err != nil {
		return nil, FileError(path, err)
	}
	return s, nil
}

// openStoreKey opens a key in a key store.
func openStoreKey(a *base.App, ctx context.Context, r keystore.Ref, flag string) (crypto.Signer, error) {
	s, err := a.Keys.Open(ctx, r.String())
	if err != nil {
		return nil, keyStoreError(flag, err)
	}
	return s, nil
}

// keyStoreError explains a key store's failure in the flag's words.
func keyStoreError(flag string, err error) error {
	var e *keystore.StoreError
	if errors.As(err, &e) {
		what := e.What
		if e.Detail != "" {
			what += ": " + e.Detail
		}
		return base.Fail(nil, e.Fix, "%s %s: %s", flag, e.Ref, what)
	}
	if re := (*keystore.RefError)(nil); errors.As(err, &re) {
		return base.Usage(re.Fix, "%s %s", flag, re.Reason)
	}
	return base.Fail(err, "check the key store and the reference", "%s", flag)
}

// FileError explains why a key file cannot be used.
func FileError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return base.Fail(nil, "check the path, or create the key with \""+base.CommandLine("ksa", "issuer", "keygen", "--out", path)+"\"", "key file %s does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return base.Fail(nil, "run as a user that can read it (private keys are mode 0600)", "key file %s is not readable", path)
	case errors.Is(err, base.ErrTooLarge):
		return base.Fail(nil, Fix, "key file %s is over the %d-byte limit", path, keystore.MaxPEMFileBytes)
	case errors.Is(err, jwks.ErrNoKeys):
		return base.Fail(nil, Fix, "%s holds no PEM key", path)
	case errors.Is(err, jwks.ErrMalformedPEM):
		return base.Fail(err, Fix+" (encrypted keys are not supported: decrypt with openssl pkey first)", "%s has a damaged key", path)
	case errors.Is(err, jwks.ErrUnsupportedKey):
		return base.Fail(err, Fix, "%s holds a key kube-apiserver cannot use", path)
	}
	return base.Fail(err, Fix, "reading key file %s", path)
}

// ForAPIServer refuses a key kube-apiserver cannot load, for output meant
// for it (documents it must match, flags, tokens it must verify): it reads
// RSA and ECDSA keys only, so it would not start with an Ed25519 signing
// key and skips an Ed25519 key among its verification keys.
func ForAPIServer(path string, pub crypto.PublicKey) error {
	switch pub.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey:
		return nil
	}
	next := strings.TrimSuffix(path, ".key") + "-rsa.key"
	return base.Fail(nil, "use an RSA or ECDSA key: \""+base.CommandLine("ksa", "issuer", "keygen", "--out", next)+"\" makes one",
		"%s holds an %s key, which kube-apiserver cannot load", path, KeyType(pub))
}

// Spec says what key to generate.
type Spec struct {
	Type  string // rsa or ecdsa
	Bits  int
	Curve string
}

// CheckFlags refuses --bits for an ECDSA key and --curve for an RSA key.
func (s Spec) CheckFlags(cmd *cobra.Command) error {
	isRSA := strings.EqualFold(s.Type, "rsa")
	return base.FirstError(
		base.OnlyWith(cmd, "bits", isRSA, "--type rsa"),
		base.OnlyWith(cmd, "curve", !isRSA, "--type ecdsa"),
	)
}

// Generate makes a key.
func (s Spec) Generate() (crypto.Signer, error) {
	ks, err := s.storeSpec()
	if err != nil {
		return nil, err
	}
	if ks.RSA {
		return rsa.GenerateKey(rand.Reader, ks.Bits)
	}
	return ecdsa.GenerateKey(ks.Curve, rand.Reader)
}

// SpecOf describes an existing key, to generate the next one alike.
func SpecOf(s crypto.Signer) Spec {
	switch k := s.Public().(type) {
	case *rsa.PublicKey:
		return Spec{Type: "rsa", Bits: k.N.BitLen()}
	case *ecdsa.PublicKey:
		return Spec{Type: "ecdsa", Curve: k.Curve.Params().Name}
	}
	return Spec{Type: "rsa", Bits: 2048}
}

// EncodePair returns the PEM of a private key (PKCS #8) and of its
// public key (PKIX).
func EncodePair(s crypto.Signer) (private, public []byte, err error) {
	der, err := x509.MarshalPKCS8PrivateKey(s)
	if err != nil {
		return nil, nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(s.Public())
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), nil
}

// PublicPath is where the public half of a private key file goes: sa.key
// gives sa.pub (kubeadm's names), anything else gets ".pub" appended.
func PublicPath(private string) string {
	if p, ok := strings.CutSuffix(private, ".key"); ok {
		return p + ".pub"
	}
	return private + ".pub"
}

// WritePair writes a new key pair, never replacing any file: flag
// names the flag of the private key file, publicFlag the one of the
// public key file (the same flag when the public path comes from it).
func WritePair(a *base.App, s crypto.Signer, private, public, flag, publicFlag string) error {
	priv, pub, err := EncodePair(s)
	if err != nil {
		return base.Fail(err, base.BugFix, "encoding the key")
	}
	const fix = "choose another %s, or remove the old file yourself if it is truly unused (keys are never overwritten)"
	return a.WriteOutputs(
		base.Output{Path: private, Data: priv, Perm: 0o600, Flag: flag, ExistsFix: fmt.Sprintf(fix, flag)},
		base.Output{Path: public, Data: pub, Perm: 0o644, Flag: publicFlag, ExistsFix: fmt.Sprintf(fix, publicFlag)},
	)
}

// KeyType names a public key's type and size in output and messages: "RSA
// 2048", "ECDSA P-256", "Ed25519". It never panics, whatever pub holds.
func KeyType(pub crypto.PublicKey) string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k == nil || k.N == nil {
			return "RSA (empty)"
		}
		return "RSA " + strconv.Itoa(k.N.BitLen())
	case *ecdsa.PublicKey:
		if k == nil || k.Curve == nil {
			return "ECDSA (empty)"
		}
		return "ECDSA " + k.Curve.Params().Name
	case ed25519.PublicKey:
		return "Ed25519"
	case nil:
		return "none"
	}
	return fmt.Sprintf("%T", pub)
}

// CreateInStore makes a key of spec in a key store and writes its public
// key to publicOut, which is checked first: a refused file leaves no key
// behind. flag names the flag of the reference.
func CreateInStore(a *base.App, ctx context.Context, r keystore.Ref, spec Spec, flag, publicOut string) (keystore.Created, error) {
	ks, err := spec.storeSpec()
	if err != nil {
		return keystore.Created{}, err
	}
	pubFlag := "--public-out"
	if flag != "--out" {
		pubFlag = flag
	}
	if publicOut != "" {
		if _, err := a.CheckWritable(base.Output{Path: publicOut, Flag: pubFlag}); err != nil {
			return keystore.Created{}, err
		}
	}
	created, err := a.Keys.Create(ctx, r.String(), ks)
	if err != nil {
		return keystore.Created{}, keyStoreError(flag, err)
	}
	if publicOut == "" {
		return created, nil
	}
	der, err := x509.MarshalPKIXPublicKey(created.Public)
	if err != nil {
		return keystore.Created{}, base.Fail(err, base.BugFix, "encoding the public key of %s", created.Ref)
	}
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	if err := a.WriteOutputs(base.Output{Path: publicOut, Data: pub, Perm: 0o644, Flag: pubFlag,
		ExistsFix: "choose another " + pubFlag + " (files are never overwritten)"}); err != nil {
		what := err.Error()
		if e := (*base.Error)(nil); errors.As(err, &e) {
			what = e.What
		}
		return keystore.Created{}, base.Fail(nil, "the key exists: give its reference to ksa issuer render --key to publish it", "created %s, but %s", created.Ref, what)
	}
	return created, nil
}

// storeSpec is the key spec of a key to make, in a key store or here.
func (s Spec) storeSpec() (keystore.KeySpec, error) {
	signer := keystore.KeySpec{}
	switch strings.ToLower(s.Type) {
	case "rsa":
		if s.Bits < jwks.MinRSABits || s.Bits > jwks.MaxRSABits {
			return signer, base.Usage(fmt.Sprintf("use --bits between %d and %d (2048 or 3072 is usual)", jwks.MinRSABits, jwks.MaxRSABits), "--bits %d is out of range", s.Bits)
		}
		return keystore.KeySpec{RSA: true, Bits: s.Bits}, nil
	case "ecdsa", "ec":
		switch strings.ToUpper(s.Curve) {
		case "P-256", "P256":
			return keystore.KeySpec{Curve: elliptic.P256()}, nil
		case "P-384", "P384":
			return keystore.KeySpec{Curve: elliptic.P384()}, nil
		case "P-521", "P521":
			return keystore.KeySpec{Curve: elliptic.P521()}, nil
		}
		return signer, base.Usage("use --curve P-256, P-384 or P-521", "--curve %q is not supported", s.Curve)
	}
	return signer, base.Usage("use --type rsa or --type ecdsa", "--type %q is not supported", s.Type)
}
