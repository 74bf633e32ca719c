package oidc

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
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
func WriteStatic(dir string, docs *Documents) error {
	if docs == nil || len(docs.Discovery) == 0 || len(docs.JWKS) == 0 {
		return errs.New(prefix, "no documents to write")
	}
	for _, f := range []struct {
		path string
		data []byte
	}{
		{DiscoveryPath, docs.Discovery},
		{JWKSPath, docs.JWKS},
	} {
		name := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(f.path, "/")))
		if err := writeAtomic(name, f.data); err != nil {
			return errs.Wrap(prefix, nil, "writing "+name, err)
		}
	}
	return nil
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
