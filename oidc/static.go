package oidc

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/jwks"
)

// WriteStatic writes both documents under dir laid out for blob or CDN
// hosting (the self-managed Azure workload identity flow): the discovery
// document at <dir>/.well-known/openid-configuration and the key set at
// <dir>/openid/v1/jwks, byte-identical to what [Handler] serves. For the
// issuer to be discoverable, dir's content must be served at the issuer URL
// and the key set at jwks_uri; render with JWKSURI set to where the key set
// will be hosted. Files are written to a temporary name and renamed, so a
// reader never sees half a document. Set the hosting's Content-Type to
// DiscoveryContentType and JWKSContentType.
//
// A file already where a document goes is replaced only when it is a
// document of the same kind (an earlier rendering): anything else, a
// private key or a directory above all, is left alone and nothing is
// written ([ErrNotReplaced]).
func WriteStatic(dir string, docs *Documents) error {
	if docs == nil || len(docs.Discovery) == 0 || len(docs.JWKS) == 0 {
		return errs.New(prefix, "no documents to write")
	}
	files := []struct {
		name string
		data []byte
		ours func([]byte) bool
	}{
		{staticName(dir, DiscoveryPath), docs.Discovery, isDiscovery},
		{staticName(dir, JWKSPath), docs.JWKS, isKeySet},
	}
	for _, f := range files {
		if err := checkReplaceable(f.name, f.ours); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := writeAtomic(f.name, f.data); err != nil {
			return errs.Wrap(prefix, nil, "writing "+f.name, err)
		}
	}
	return nil
}

// staticName is where WriteStatic puts the document served at path.
func staticName(dir, path string) string {
	return filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(path, "/")))
}

// maxReplacedBytes bounds the file WriteStatic reads to decide whether it
// may replace it: far above any document it writes.
const maxReplacedBytes = 4 << 20

// checkReplaceable returns nil when name does not exist or is a regular
// file that ours recognizes as a document of its kind.
func checkReplaceable(name string, ours func([]byte) bool) error {
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errs.Wrap(prefix, nil, "checking "+name, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxReplacedBytes {
		return errs.Wrap(prefix, ErrNotReplaced, name+" exists and is not a document WriteStatic wrote", nil)
	}
	old, err := os.ReadFile(name)
	if err != nil {
		return errs.Wrap(prefix, nil, "checking "+name, err)
	}
	if !ours(old) {
		return errs.Wrap(prefix, ErrNotReplaced, name+" exists and is not a document WriteStatic wrote", nil)
	}
	return nil
}

// isDiscovery reports whether doc is a discovery document.
func isDiscovery(doc []byte) bool {
	md, err := ParseMetadata(doc)
	return err == nil && md.Issuer != "" && md.JWKSURI != ""
}

// isKeySet reports whether doc is a public key set (a set holding
// private material is not one of ours: it is never replaced).
func isKeySet(doc []byte) bool {
	return jwks.Audit(doc) == nil
}

func writeAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
