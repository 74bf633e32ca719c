package signercmd

import (
	"context"
	"errors"
	"time"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/extsigner"
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
func (f *signerFlags) keys(ctx context.Context, a *base.App, obs *signerObserver) (*signerKeys, error) {
	if f.ringFile != "" {
		w, err := extsigner.NewRingFileWatcher(ctx, obs.ringFileWatcherConfig(f.ringFile, a.KeyOpener(), a.Now, f.ringInterval))
		var re *extsigner.RingFileReadError
		switch {
		case errors.As(err, &re):
			return nil, keyflags.RingFileReadError(f.ringFile, err)
		case err != nil:
			return nil, keyflags.RingFileError(f.ringFile, err)
		}
		return &signerKeys{ring: w.Ring(), file: w, from: f.ringFile}, nil
	}
	schedule, err := f.flagSchedule(ctx, a)
	if err != nil {
		return nil, err
	}
	ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: schedule, MaxTokenLifetime: f.lifetime, Now: a.Now, OnChange: obs.change})
	if err != nil {
		return nil, base.ConfigError(err, base.FlagFor{"RingConfig.MaxTokenLifetime": "--max-token-lifetime",
			"RingConfig.Schedule": "--key, --previous-key or --previous-public-key"}, "ksa signer serve")
	}
	return &signerKeys{ring: ring, from: "flags"}, nil
}

// ringFileWatcherConfig is the watcher of the ring file at path, as --ring
// and --ring-check-interval say, its reloads and checks logged and
// counted.
func (o *signerObserver) ringFileWatcherConfig(path string, opener keystore.Opener, now func() time.Time, interval time.Duration) extsigner.RingFileWatcherConfig {
	return extsigner.RingFileWatcherConfig{
		Path: path, Opener: opener, Parse: keyflags.ParseRingFile, Interval: interval, Now: now, OnChange: o.change,
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
func (f *signerFlags) flagSchedule(ctx context.Context, a *base.App) ([]extsigner.ScheduledKey, error) {
	signer, err := keyflags.LoadSigner(a, ctx, f.primary, "--key")
	if err != nil {
		return nil, err
	}
	if err := keyflags.ForAPIServer(f.primary, signer.Public()); err != nil {
		return nil, err
	}
	schedule := []extsigner.ScheduledKey{{Signer: signer, Primary: time.Unix(0, 0)}}
	add := func(path, flag string, exclude bool) error {
		kf, err := keyflags.Load(a, ctx, path, flag)
		if err != nil {
			return err
		}
		for _, k := range kf.Keys {
			if err := keyflags.ForAPIServer(path, k.Public); err != nil {
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
