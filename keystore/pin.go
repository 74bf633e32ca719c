package keystore

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/ksa-go/ksa/internal/errs"
)

// MaxPINBytes bounds a PIN file: 1024 bytes. A larger file is refused
// unread.
const MaxPINBytes = 1024

// ReadPIN returns the PIN of a pkcs11 reference, from its pin-source: a
// file (a path, or a file: URI), or with pin-source=env:NAME the
// environment variable NAME. Trailing white space (the newline of echo) is
// dropped, as step-ca drops it; an empty PIN is refused. Errors match
// [ErrKeyStore] and the cause (fs.ErrNotExist, ...); they name the file
// or variable, never the PIN.
func (r Ref) ReadPIN() (string, error) {
	src := r.Attr("pin-source")
	if r.scheme != SchemePKCS11 || src == "" {
		return "", errs.Wrap(prefix, ErrKeyStore, fmt.Sprintf("%s has no pin-source", r), nil)
	}
	if name, ok := strings.CutPrefix(src, "env:"); ok {
		v, set := os.LookupEnv(name)
		switch {
		case !set:
			return "", errs.Wrap(prefix, ErrKeyStore, "the PIN's environment variable "+name+" is not set", nil)
		case strings.TrimRightFunc(v, unicode.IsSpace) == "":
			return "", errs.Wrap(prefix, ErrKeyStore, "the PIN's environment variable "+name+" is empty", nil)
		}
		return strings.TrimRightFunc(v, unicode.IsSpace), nil
	}
	path := pinPath(src)
	f, err := os.Open(path)
	if err != nil {
		return "", errs.Wrap(prefix, ErrKeyStore, "PIN file "+path+" cannot be opened", errs.PathCause(path, err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPINBytes+1))
	switch {
	case err != nil:
		return "", errs.Wrap(prefix, ErrKeyStore, "PIN file "+path+" cannot be read", errs.PathCause(path, err))
	case len(data) > MaxPINBytes:
		return "", errs.Wrap(prefix, ErrKeyStore, fmt.Sprintf("PIN file %s is over the %d-byte limit", path, MaxPINBytes), nil)
	}
	pin := bytes.TrimRightFunc(data, unicode.IsSpace)
	if len(pin) == 0 {
		return "", errs.Wrap(prefix, ErrKeyStore, "PIN file "+path+" is empty", nil)
	}
	return string(pin), nil
}

// pinPath returns the file a pin-source names: a path, or the path of a
// file: URI (file:///p, file:/p, file://localhost/p); "" for a file: URI
// of another host or none.
func pinPath(src string) string {
	rest, ok := strings.CutPrefix(src, "file:")
	if !ok {
		return src
	}
	if host, path, ok := strings.Cut(strings.TrimPrefix(rest, "//"), "/"); strings.HasPrefix(rest, "//") {
		if !ok || (host != "" && host != "localhost") {
			return ""
		}
		return "/" + path
	}
	if rest == "" {
		return ""
	}
	return rest
}
