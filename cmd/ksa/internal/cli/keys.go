package cli

import (
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

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// keyFile is a PEM key file read for publishing or signing.
type keyFile struct {
	Path string
	// Keys are the public keys in the file, in file order.
	Keys []jwks.Key
	// Signer is the file's private key, if it holds one.
	Signer crypto.Signer
}

// keyFix is the advice for a key file that cannot be used.
const keyFix = `pass a PEM key file (RSA 2048 to 8192 bits, or ECDSA P-256, P-384 or P-521), e.g. one that ksa issuer keygen wrote`

// loadKeyFile reads every key in a PEM file, as kube-apiserver reads
// --service-account-key-file, and its private key if it has one. flag
// names the flag that gave the path; the file is never written.
func (a *app) loadKeyFile(path, flag string) (*keyFile, error) {
	a.readKey(path, flag)
	data, err := readInput(path, nil, keystore.MaxPEMFileBytes)
	if err != nil {
		return nil, keyFileError(path, err)
	}
	pubs, err := jwks.ParsePublicKeysPEM(data)
	if err != nil {
		return nil, keyFileError(path, err)
	}
	kf := &keyFile{Path: path}
	for _, p := range pubs {
		k, err := jwks.NewKey(p)
		if err != nil {
			return nil, keyFileError(path, err)
		}
		kf.Keys = append(kf.Keys, k)
	}
	if s, err := keystore.ParseSigningKeyPEM(data); err == nil {
		kf.Signer = s
	}
	return kf, nil
}

// loadSigningKey reads the private key of a PEM file. flag names the flag
// that gave the path; the file is never written.
func (a *app) loadSigningKey(path, flag string) (crypto.Signer, error) {
	a.readKey(path, flag)
	data, err := readInput(path, nil, keystore.MaxPEMFileBytes)
	if err != nil {
		return nil, keyFileError(path, err)
	}
	s, err := keystore.ParseSigningKeyPEM(data)
	if errors.Is(err, jwks.ErrNoKeys) {
		return nil, fail(nil, "pass the private key file (the one ksa issuer keygen wrote at --out, mode 0600), not the public one", "key file %s holds no private key", path)
	}
	if err != nil {
		return nil, keyFileError(path, err)
	}
	return s, nil
}

// keyFileError explains why a key file cannot be used.
func keyFileError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(nil, "check the path, or create the key with \""+commandLine("ksa", "issuer", "keygen", "--out", path)+"\"", "key file %s does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return fail(nil, "run as a user that can read it (private keys are mode 0600)", "key file %s is not readable", path)
	case errors.Is(err, errTooLarge):
		return fail(nil, keyFix, "key file %s is over the %d-byte limit", path, keystore.MaxPEMFileBytes)
	case errors.Is(err, jwks.ErrNoKeys):
		return fail(nil, keyFix, "%s holds no PEM key", path)
	case errors.Is(err, jwks.ErrMalformedPEM):
		return fail(err, keyFix+" (encrypted keys are not supported: decrypt with openssl pkey first)", "%s has a damaged key", path)
	case errors.Is(err, jwks.ErrUnsupportedKey):
		return fail(err, keyFix, "%s holds a key kube-apiserver cannot use", path)
	}
	return fail(err, keyFix, "reading key file %s", path)
}

// forAPIServer refuses a key kube-apiserver cannot load, for output meant
// for it (documents it must match, flags, tokens it must verify): it reads
// RSA and ECDSA keys only, so it would not start with an Ed25519 signing
// key and skips an Ed25519 key among its verification keys.
func forAPIServer(path string, pub crypto.PublicKey) error {
	switch pub.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey:
		return nil
	}
	next := strings.TrimSuffix(path, ".key") + "-rsa.key"
	return fail(nil, "use an RSA or ECDSA key: \""+commandLine("ksa", "issuer", "keygen", "--out", next)+"\" makes one",
		"%s holds an %s key, which kube-apiserver cannot load", path, keyType(pub))
}

// keySpec says what key to generate.
type keySpec struct {
	Type  string // rsa or ecdsa
	Bits  int
	Curve string
}

// checkFlags refuses --bits for an ECDSA key and --curve for an RSA key.
func (s keySpec) checkFlags(cmd *cobra.Command) error {
	isRSA := strings.EqualFold(s.Type, "rsa")
	return firstError(
		onlyWith(cmd, "bits", isRSA, "--type rsa"),
		onlyWith(cmd, "curve", !isRSA, "--type ecdsa"),
	)
}

// generate makes a key.
func (s keySpec) generate() (crypto.Signer, error) {
	switch strings.ToLower(s.Type) {
	case "rsa":
		if s.Bits < jwks.MinRSABits || s.Bits > jwks.MaxRSABits {
			return nil, usage(fmt.Sprintf("use --bits between %d and %d (2048 or 3072 is usual)", jwks.MinRSABits, jwks.MaxRSABits), "--bits %d is out of range", s.Bits)
		}
		return rsa.GenerateKey(rand.Reader, s.Bits)
	case "ecdsa", "ec":
		var c elliptic.Curve
		switch strings.ToUpper(s.Curve) {
		case "P-256", "P256":
			c = elliptic.P256()
		case "P-384", "P384":
			c = elliptic.P384()
		case "P-521", "P521":
			c = elliptic.P521()
		default:
			return nil, usage("use --curve P-256, P-384 or P-521", "--curve %q is not supported", s.Curve)
		}
		return ecdsa.GenerateKey(c, rand.Reader)
	}
	return nil, usage("use --type rsa or --type ecdsa", "--type %q is not supported", s.Type)
}

// specOf describes an existing key, to generate the next one alike.
func specOf(s crypto.Signer) keySpec {
	switch k := s.Public().(type) {
	case *rsa.PublicKey:
		return keySpec{Type: "rsa", Bits: k.N.BitLen()}
	case *ecdsa.PublicKey:
		return keySpec{Type: "ecdsa", Curve: k.Curve.Params().Name}
	}
	return keySpec{Type: "rsa", Bits: 2048}
}

// encodeKeyPair returns the PEM of a private key (PKCS #8) and of its
// public key (PKIX).
func encodeKeyPair(s crypto.Signer) (private, public []byte, err error) {
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

// publicPath is where the public half of a private key file goes: sa.key
// gives sa.pub (kubeadm's names), anything else gets ".pub" appended.
func publicPath(private string) string {
	if p, ok := strings.CutSuffix(private, ".key"); ok {
		return p + ".pub"
	}
	return private + ".pub"
}

// writeKeyPair writes a new key pair, never replacing any file: flag
// names the flag of the private key file.
func (a *app) writeKeyPair(s crypto.Signer, private, public, flag string) error {
	priv, pub, err := encodeKeyPair(s)
	if err != nil {
		return fail(err, bugFix, "encoding the key")
	}
	const fix = "choose another %s, or remove the old file yourself if it is truly unused (keys are never overwritten)"
	return a.writeOutputs(
		output{path: private, data: priv, perm: 0o600, flag: flag, existsFix: fmt.Sprintf(fix, flag)},
		output{path: public, data: pub, perm: 0o644, flag: flag, existsFix: fmt.Sprintf(fix, flag)},
	)
}

// keyType names a public key's type and size in output and messages: "RSA
// 2048", "ECDSA P-256", "Ed25519". It never panics, whatever pub holds.
func keyType(pub crypto.PublicKey) string {
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
