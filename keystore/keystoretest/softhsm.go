package keystoretest

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/skipmark"
)

// SoftHSMInstall is the command that installs SoftHSM2 on Debian and
// Ubuntu.
const SoftHSMInstall = "apt-get install -y softhsm2"

// softHSMModules are where distributions put SoftHSM2's PKCS #11 module.
var softHSMModules = []string{
	"/usr/lib/softhsm/libsofthsm2.so",
	"/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
	"/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so",
	"/usr/lib64/pkcs11/libsofthsm2.so",
	"/usr/local/lib/softhsm/libsofthsm2.so",
	"/opt/homebrew/lib/softhsm/libsofthsm2.so",
}

// SoftHSM is a SoftHSM2 token of its own: a configuration file and token
// directory in a directory of the caller's, one initialized token with a
// random user PIN written to a file (mode 0600). A process uses the token
// when its SOFTHSM2_CONF names Conf ([SoftHSM.Env]); SoftHSM2 reads it
// when the module is initialized.
type SoftHSM struct {
	// Module is the path of SoftHSM2's PKCS #11 module.
	Module string
	// Conf is the configuration file; its tokens are under its directory.
	Conf string
	// Token is the token's label.
	Token string
	// PINFile holds the user PIN, a newline after it.
	PINFile string
	// PIN is the user PIN.
	PIN  string
	util string
}

// softHSMMark is the line a test skips with when file, a part of
// SoftHSM2, is missing.
func softHSMMark(file string) skipmark.Skip {
	return skipmark.Skip{Subject: "SoftHSM2", Missing: []string{file}, Install: SoftHSMInstall}
}

// NewSoftHSM makes a token in dir (which must exist) with softhsm2-util,
// found on PATH, and SoftHSM2's module, found where distributions install
// it or at $KSA_SOFTHSM2_MODULE. Either missing is an error matching
// [ErrNotInstalled].
func NewSoftHSM(dir string) (*SoftHSM, error) {
	util, err := exec.LookPath("softhsm2-util")
	if err != nil {
		return nil, notInstalled(softHSMMark("softhsm2-util"), "softhsm2-util is not on PATH; install SoftHSM2 with: "+SoftHSMInstall)
	}
	module := os.Getenv("KSA_SOFTHSM2_MODULE")
	for _, m := range softHSMModules {
		if module != "" {
			break
		}
		if _, err := os.Stat(m); err == nil {
			module = m
		}
	}
	if module == "" {
		return nil, notInstalled(softHSMMark("libsofthsm2.so"), "libsofthsm2.so is not in "+strings.Join(softHSMModules, ", ")+" (KSA_SOFTHSM2_MODULE names another place); install SoftHSM2 with: "+SoftHSMInstall)
	}
	h := &SoftHSM{Module: module, Conf: filepath.Join(dir, "softhsm2.conf"), Token: "ksa", PINFile: filepath.Join(dir, "pin"), util: util}
	tokens := filepath.Join(dir, "tokens")
	if err := os.MkdirAll(tokens, 0o700); err != nil {
		return nil, errs.Wrap(prefix, nil, "making the token directory", err)
	}
	conf := fmt.Sprintf("directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n", tokens)
	if err := os.WriteFile(h.Conf, []byte(conf), 0o600); err != nil {
		return nil, errs.Wrap(prefix, nil, "writing the SoftHSM2 configuration", err)
	}
	h.PIN, err = digits(8)
	if err != nil {
		return nil, err
	}
	soPIN, err := digits(8)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(h.PINFile, []byte(h.PIN+"\n"), 0o600); err != nil {
		return nil, errs.Wrap(prefix, nil, "writing the PIN file", err)
	}
	if err := h.run("--init-token", "--free", "--label", h.Token, "--pin", h.PIN, "--so-pin", soPIN); err != nil {
		return nil, err
	}
	return h, nil
}

// StartSoftHSM makes a token in a temporary directory of the test and
// points SOFTHSM2_CONF at it for the rest of the test (so the test cannot
// be parallel). Without SoftHSM2 the test is skipped, saying how to
// install it; with the environment variable CI=1 it fails instead.
func StartSoftHSM(t testing.TB) *SoftHSM {
	t.Helper()
	h, err := NewSoftHSM(t.TempDir())
	if err != nil {
		missing(t, err)
	}
	t.Setenv("SOFTHSM2_CONF", h.Conf)
	return h
}

// Env returns the environment a process needs to use the token.
func (h *SoftHSM) Env() []string { return []string{"SOFTHSM2_CONF=" + h.Conf} }

// Ref returns the reference of the key with CKA_ID id (hex) and CKA_LABEL
// object on the token, its PIN read from PINFile; an empty id or object is
// left out.
func (h *SoftHSM) Ref(id, object string) string {
	ref := "pkcs11:module-path=" + h.Module + ";token=" + h.Token
	if id != "" {
		ref += ";id=" + id
	}
	if object != "" {
		ref += ";object=" + object
	}
	return ref + "?pin-source=" + h.PINFile
}

// Import puts a private key on the token with softhsm2-util, with CKA_ID
// id (hex) and CKA_LABEL object.
func (h *SoftHSM) Import(key crypto.Signer, id, object string) error {
	if _, err := hex.DecodeString(id); err != nil || id == "" {
		return errs.Wrap(prefix, nil, fmt.Sprintf("id %q is not hex", id), nil)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return errs.Wrap(prefix, nil, "encoding the key", err)
	}
	f, err := os.CreateTemp(filepath.Dir(h.Conf), "import-*.pem")
	if err != nil {
		return errs.Wrap(prefix, nil, "writing the key to import", err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errs.Wrap(prefix, nil, "writing the key to import", err)
	}
	return h.run("--import", f.Name(), "--token", h.Token, "--label", object, "--id", id, "--pin", h.PIN)
}

// run runs softhsm2-util on the token's configuration.
func (h *SoftHSM) run(args ...string) error {
	cmd := exec.Command(h.util, args...)
	cmd.Env = append(os.Environ(), h.Env()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return errs.Wrap(prefix, nil, fmt.Sprintf("softhsm2-util %s: %s", args[0], strings.TrimSpace(string(out))), err)
	}
	return nil
}

// digits returns n random decimal digits.
func digits(n int) (string, error) {
	var b strings.Builder
	for range n {
		d, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			return "", errs.Wrap(prefix, nil, "making a PIN", err)
		}
		b.WriteByte(byte('0' + d.Int64()))
	}
	return b.String(), nil
}
