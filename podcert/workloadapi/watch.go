package workloadapi

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/fsnotify/fsnotify"
)

// Watch follows the mounted files with the operating system's file events
// (inotify on Linux), not a polling interval: it watches the directory of
// every file of the configuration and calls [Server.Update] after each
// burst of events in them. The kubelet replaces a projected volume's
// files by swapping its ..data link to a new directory, an event in the
// volume's directory, as are files written or renamed in place. It
// returns when ctx ends (nil), or when the directories cannot be watched.
func (s *Server) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return wrap(nil, "watching the mounted files", err)
	}
	defer w.Close()
	for _, dir := range s.dirs() {
		if err := w.Add(dir); err != nil {
			return wrap(nil, "watching "+dir, err)
		}
	}
	// Whatever changed before the watch began.
	_ = s.Update()
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.Events:
			if !ok {
				return nil
			}
			drain(w.Events)
			_ = s.Update()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// An overflow of the kernel's queue loses events: look at the
			// files, whatever happened.
			s.report(wrap(nil, "watching the mounted files", err))
			_ = s.Update()
		}
	}
}

// drain takes the events already queued, so that a burst (the kubelet's
// swap is several) makes one update.
func drain(events chan fsnotify.Event) {
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// dirs returns the directories of the configured files, each once.
func (s *Server) dirs() []string {
	c := s.cfg.Credential
	paths := []string{c.BundlePath, c.KeyPath, c.ChainPath}
	for _, b := range s.cfg.TrustBundles {
		paths = append(paths, b.Path)
	}
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if d := filepath.Dir(p); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}
