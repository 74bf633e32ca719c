package cli

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"io/fs"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// signerKeys is the ring "ksa signer serve" serves, and where it came
// from.
type signerKeys struct {
	ring *extsigner.Ring
	// file watches the ring file; nil for a ring of key flags.
	file *extsigner.RingFileWatcher
	// from names the source in the start line: the ring file, or "flags".
	from string
}

// keys builds the ring of the flags: the ring file's, or the one-key ring
// of --key and the keys published beside it.
func (f *signerFlags) keys(ctx context.Context, a *app, obs *signerObserver) (*signerKeys, error) {
	if f.ringFile != "" {
		w, err := extsigner.NewRingFileWatcher(ctx, obs.ringFileWatcherConfig(f.ringFile, a.keyOpener(), a.now, f.ringInterval))
		var re *extsigner.RingFileReadError
		switch {
		case errors.As(err, &re):
			return nil, ringFileReadError(f.ringFile, err)
		case err != nil:
			return nil, ringFileError(f.ringFile, err)
		}
		return &signerKeys{ring: w.Ring(), file: w, from: f.ringFile}, nil
	}
	schedule, err := f.flagSchedule(ctx, a)
	if err != nil {
		return nil, err
	}
	ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: schedule, MaxTokenLifetime: f.lifetime, Now: a.now, OnChange: obs.change})
	if err != nil {
		return nil, configError(err, flagFor{"RingConfig.MaxTokenLifetime": "--max-token-lifetime",
			"RingConfig.Schedule": "--key, --previous-key or --previous-public-key"}, "ksa signer serve")
	}
	return &signerKeys{ring: ring, from: "flags"}, nil
}

// ringFileWatcherConfig is the watcher of the ring file at path, as --ring
// and --ring-check-interval say, its reloads and checks logged and
// counted.
func (o *signerObserver) ringFileWatcherConfig(path string, opener keystore.Opener, now func() time.Time, interval time.Duration) extsigner.RingFileWatcherConfig {
	return extsigner.RingFileWatcherConfig{
		Path: path, Opener: opener, Parse: parseRingFile, Interval: interval, Now: now, OnChange: o.change,
		// Every failed login counts toward locking the token's PIN.
		NoRetry:  func(err error) bool { return errors.Is(err, keystore.ErrLoginRefused) },
		OnReload: func(r extsigner.RingReload) { o.ringReload(path, r) },
		OnCheck:  o.ringCheck,
	}
}

// flagSchedule is the schedule of --key, --previous-key and
// --previous-public-key: the key signs from the start; the others are
// published from the start, verify-only (previous public keys excluded
// from discovery). Its data timestamp is the Unix epoch, the same on every
// replica started with the same flags.
func (f *signerFlags) flagSchedule(ctx context.Context, a *app) ([]extsigner.ScheduledKey, error) {
	signer, err := a.loadSigningKey(ctx, f.primary, "--key")
	if err != nil {
		return nil, err
	}
	if err := forAPIServer(f.primary, signer.Public()); err != nil {
		return nil, err
	}
	schedule := []extsigner.ScheduledKey{{Signer: signer, Primary: time.Unix(0, 0)}}
	add := func(path, flag string, exclude bool) error {
		kf, err := a.loadKeyFile(ctx, path, flag)
		if err != nil {
			return err
		}
		for _, k := range kf.Keys {
			if err := forAPIServer(path, k.Public); err != nil {
				return err
			}
			k.ExcludeFromDiscovery = exclude
			schedule = append(schedule, extsigner.ScheduledKey{Key: k})
		}
		return nil
	}
	for _, p := range f.previous {
		if err := add(p, "--previous-key", false); err != nil {
			return nil, err
		}
	}
	for _, p := range f.previousPublic {
		if err := add(p, "--previous-public-key", true); err != nil {
			return nil, err
		}
	}
	return schedule, nil
}

// openSigningKey opens the key ref of flag with opener, explaining a key
// file that cannot be used.
func openSigningKey(ctx context.Context, opener keystore.Opener, ref, flag string) (crypto.Signer, error) {
	s, err := opener.Open(ctx, ref)
	switch {
	case err == nil:
		return s, nil
	case errors.Is(err, jwks.ErrNoKeys):
		return nil, fail(nil, "pass the private key file (the one ksa issuer keygen wrote at --out, mode 0600), not the public one", "key file %s holds no private key", ref)
	case errors.Is(err, keystore.ErrKeyFile), errors.Is(err, fs.ErrNotExist), errors.Is(err, jwks.ErrMalformedPEM), errors.Is(err, jwks.ErrUnsupportedKey):
		return nil, keyFileError(ref, err)
	}
	return nil, fail(err, "check the key given with "+flag, "opening the key of %s", flag)
}

// ringFileReadError explains a ring file that cannot be read.
func ringFileReadError(path string, err error) error {
	var re *extsigner.RingFileReadError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(nil, "check the --ring path", "ring file %s does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return fail(nil, "run as a user that can read it", "ring file %s is not readable", path)
	case errors.Is(err, errTooLarge), errors.As(err, &re) && re.TooLarge:
		return fail(nil, "check the --ring path: a ring file is a few kilobytes", "ring file %s is over the %d-byte limit", path, extsigner.MaxRingFileBytes)
	case errors.As(err, &re) && re.NotRegular:
		return fail(nil, "give --ring the path of a regular file (a ConfigMap's file, or one a rename replaces)", "ring file %s is not a regular file", path)
	}
	return fail(err, "check the --ring path", "reading ring file %s", path)
}

// ringFileError explains a ring file the signer cannot start with: its
// content, or the keys it names.
func ringFileError(path string, err error) error {
	var ce *ksa.ConfigError
	switch {
	case errors.Is(err, extsigner.ErrInvalidRingFile), errors.As(err, &ce):
		// A schedule NewRing refuses: the ring file's, in its words.
		msg := strings.Replace(oneLine(ksa.ErrorText(err)), "RingConfig.Schedule ", "the ring file ", 1)
		return fail(nil, "correct the ring file (its format: ksa signer serve --help)", "%s: %s", path, msg)
	}
	return fail(nil, "check the keys the ring file names", "%s: %s", path, oneLine(ksa.ErrorText(err)))
}

// parseRingFile parses a ring file, YAML or JSON.
func parseRingFile(data []byte) (*extsigner.RingFile, error) {
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
	return ksa.ErrorText(extsigner.ErrInvalidRingFile) + ": not YAML or JSON: " + oneLine(e.err.Error())
}

func (e *notYAMLError) Is(target error) bool { return target == extsigner.ErrInvalidRingFile }

// isJSON reports whether data starts, after spaces, with a JSON object.
func isJSON(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
}
