package keyflags

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"io/fs"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// OpenSigner opens the key ref of flag with opener, explaining a key
// file that cannot be used.
func OpenSigner(ctx context.Context, opener keystore.Opener, ref, flag string) (crypto.Signer, error) {
	s, err := opener.Open(ctx, ref)
	switch {
	case err == nil:
		return s, nil
	case errors.Is(err, jwks.ErrNoKeys):
		return nil, base.Fail(nil, "pass the private key file (the one ksa issuer keygen wrote at --out, mode 0600), not the public one", "key file %s holds no private key", ref)
	case errors.Is(err, keystore.ErrKeyFile), errors.Is(err, fs.ErrNotExist), errors.Is(err, jwks.ErrMalformedPEM), errors.Is(err, jwks.ErrUnsupportedKey):
		return nil, FileError(ref, err)
	}
	return nil, base.Fail(err, "check the key given with "+flag, "opening the key of %s", flag)
}

// RingFileReadError explains a ring file that cannot be read.
func RingFileReadError(path string, err error) error {
	var re *extsigner.RingFileReadError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return base.Fail(nil, "check the --ring path", "ring file %s does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return base.Fail(nil, "run as a user that can read it", "ring file %s is not readable", path)
	case errors.Is(err, base.ErrTooLarge), errors.As(err, &re) && re.TooLarge:
		return base.Fail(nil, "check the --ring path: a ring file is a few kilobytes", "ring file %s is over the %d-byte limit", path, extsigner.MaxRingFileBytes)
	case errors.As(err, &re) && re.NotRegular:
		return base.Fail(nil, "give --ring the path of a regular file (a ConfigMap's file, or one a rename replaces)", "ring file %s is not a regular file", path)
	}
	return base.Fail(err, "check the --ring path", "reading ring file %s", path)
}

// RingFileError explains a ring file the signer cannot start with: its
// content, or the keys it names.
func RingFileError(path string, err error) error {
	var ce *ksa.ConfigError
	switch {
	case errors.Is(err, extsigner.ErrInvalidRingFile), errors.As(err, &ce):
		// A schedule NewRing refuses: the ring file's, in its words.
		msg := strings.Replace(base.OneLine(ksa.ErrorText(err)), "RingConfig.Schedule ", "the ring file ", 1)
		return base.Fail(nil, "correct the ring file (its format: ksa signer serve --help)", "%s: %s", path, msg)
	}
	return base.Fail(nil, "check the keys the ring file names", "%s: %s", path, base.OneLine(ksa.ErrorText(err)))
}

// ParseRingFile parses a ring file, YAML or JSON.
func ParseRingFile(data []byte) (*extsigner.RingFile, error) {
	if !isJSON(data) {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, &notYAMLError{err}
		}
		data = j
	}
	return extsigner.ParseRingFile(data)
}

// notYAMLError is a ring file that is neither YAML nor JSON; it matches
// extsigner.ErrInvalidRingFile.
type notYAMLError struct{ err error }

func (e *notYAMLError) Error() string {
	return ksa.ErrorText(extsigner.ErrInvalidRingFile) + ": not YAML or JSON: " + base.OneLine(e.err.Error())
}

func (e *notYAMLError) Is(target error) bool { return target == extsigner.ErrInvalidRingFile }

// isJSON reports whether data starts, after spaces, with a JSON object.
func isJSON(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
}

// RingFileBytes encodes a ring file as JSON, or as YAML when like, the
// file it replaces, is not JSON.
func RingFileBytes(file *extsigner.RingFile, like []byte) ([]byte, error) {
	out := file.AppendJSON(nil)
	if isJSON(like) {
		return out, nil
	}
	y, err := yaml.JSONToYAML(out)
	if err != nil {
		return nil, base.Fail(err, base.BugFix, "writing the ring file as YAML")
	}
	return y, nil
}
