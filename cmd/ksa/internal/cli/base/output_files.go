package base

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ksa-go/ksa/cmd/ksa/internal/atomicfile"
	"github.com/ksa-go/ksa/oidc"
)

// replacePolicy says what existing file an output may replace.
type replacePolicy int

const (
	// replaceNothing: the file must not exist (keys, and any output
	// without --force).
	ReplaceNothing replacePolicy = iota
	// replaceForced: --force was given; any file but a private key (and
	// a file the command reads as a key) may be replaced.
	ReplaceForced
	// replaceDiscovery and replaceKeySet: render re-renders its own
	// documents and nothing else: the existing file must be a discovery
	// document, or a key set.
	ReplaceDiscovery
	ReplaceKeySet
)

// Forced returns the policy of an --out file: replaceForced with --force,
// replaceNothing without.
func Forced(force bool) replacePolicy {
	if force {
		return ReplaceForced
	}
	return ReplaceNothing
}

// maxInspectBytes bounds how much of an existing file is read to decide
// whether it may be replaced; a larger file is not replaced.
const maxInspectBytes = 1 << 20

// Output is a file the command is about to write.
type Output struct {
	Path string
	Data []byte
	Perm fs.FileMode
	// flag names the flag that chose the path, for messages ("--out").
	Flag    string
	Replace replacePolicy
	// existsFix is the advice when the file exists and may not be
	// replaced; empty means the --out advice.
	ExistsFix string
}

// ReadKey records that the command reads path as a key: it is then never
// written, under this name or any other (os.SameFile).
func (a *App) ReadKey(path, flag string) {
	a.keysRead = append(a.keysRead, keyRead{path: path, flag: flag})
}

// keyRead is a file the command read as a key, and the flag that named it.
type keyRead struct {
	path, flag string
}

// WriteOutputs checks every output first, then writes each atomically: a
// refused output leaves every file as it was.
func (a *App) WriteOutputs(outs ...Output) error {
	exist := make([]bool, len(outs))
	for i, o := range outs {
		for _, p := range outs[:i] {
			if SamePath(o.Path, p.Path) {
				return Usage("choose another "+o.Flag, "%s and %s name the same file %s", o.Flag, p.Flag, o.Path)
			}
		}
		e, err := a.CheckWritable(o)
		if err != nil {
			return err
		}
		exist[i] = e
	}
	for i, o := range outs {
		if err := atomicfile.Write(o.Path, o.Data, o.Perm, !exist[i]); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return Fail(nil, o.fixExists(), "%s already exists", o.Path)
			}
			return Fail(err, "choose a writable path for "+o.Flag, "writing %s", o.Path)
		}
	}
	return nil
}

func (o Output) fixExists() string {
	if o.ExistsFix != "" {
		return o.ExistsFix
	}
	return "choose another " + o.Flag + ", or add --force to replace it"
}

// CheckWritable reports whether o's file exists, or why it may not be
// written: it was read as a key, it holds a private key, or its policy
// does not let it be replaced.
func (a *App) CheckWritable(o Output) (exists bool, err error) {
	for _, k := range a.keysRead {
		if SamePath(o.Path, k.path) {
			return false, Fail(nil, "choose another "+o.Flag, "%s is the key this command reads (%s): it is never written", o.Path, k.flag)
		}
	}
	fi, err := os.Lstat(o.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, Fail(err, "choose a writable path for "+o.Flag, "checking %s", o.Path)
	}
	if fi.IsDir() {
		return false, Fail(nil, "choose a file name for "+o.Flag, "%s is a directory", o.Path)
	}
	if o.Replace == ReplaceNothing {
		return true, Fail(nil, o.fixExists(), "%s already exists", o.Path)
	}
	old, err := readExisting(o.Path)
	if err != nil {
		return true, Fail(err, "choose another "+o.Flag+", or move the file away yourself", "%s cannot be checked before it is replaced", o.Path)
	}
	if holdsPrivateKey(old) {
		return true, Fail(nil, "choose another "+o.Flag, "%s holds a private key: it is never replaced, --force or not", o.Path)
	}
	const renderFix = "choose an --out directory of rendered documents, or move the file away"
	switch o.Replace {
	case ReplaceDiscovery:
		if md, err := oidc.ParseMetadata(old); err != nil || md.Issuer == "" || md.JWKSURI == "" {
			return true, Fail(nil, renderFix, "%s exists and is not a discovery document: render replaces only the documents it writes", o.Path)
		}
	case ReplaceKeySet:
		if !isKeySet(old) {
			return true, Fail(nil, renderFix, "%s exists and is not a key set: render replaces only the documents it writes", o.Path)
		}
	}
	return true, nil
}

// readExisting reads a regular file (through a symbolic link), at most
// maxInspectBytes.
func readExisting(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxInspectBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxInspectBytes {
		return nil, fmt.Errorf("over %d bytes", maxInspectBytes)
	}
	return data, nil
}

// SamePath reports whether two paths name one file: the same path once
// cleaned, or the same file however reached (a hard or symbolic link).
func SamePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	if aa, err := filepath.Abs(a); err == nil {
		if bb, err := filepath.Abs(b); err == nil && aa == bb {
			return true
		}
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// holdsPrivateKey reports whether data may hold a private key: any PEM
// "PRIVATE KEY" label (PKCS #1, #8, SEC 1, encrypted, OpenSSH), or a JSON
// web key with private members. It errs on the side of a key.
func holdsPrivateKey(data []byte) bool {
	if bytes.Contains(data, []byte("PRIVATE KEY")) {
		return true
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return false
	}
	return hasPrivateJWK(v)
}

// hasPrivateJWK reports whether a JSON value holds, at any depth, an
// object with a "kty" member and a private or symmetric JWK member.
func hasPrivateJWK(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		kty := false
		private := false
		for k, m := range x {
			switch strings.ToLower(k) {
			case "kty":
				kty = true
			case "d", "p", "q", "dp", "dq", "qi", "oth", "k":
				private = true
			}
			if hasPrivateJWK(m) {
				return true
			}
		}
		return kty && private
	case []any:
		for _, e := range x {
			if hasPrivateJWK(e) {
				return true
			}
		}
	}
	return false
}

// isKeySet reports whether data is a JSON object with a "keys" array.
func isKeySet(data []byte) bool {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	return json.Unmarshal(data, &set) == nil && set.Keys != nil
}
