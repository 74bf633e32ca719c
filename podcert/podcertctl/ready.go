package podcertctl

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
)

// Reasons [Controller.Ready] gives; each error it returns matches one.
var (
	// ErrNotSynced: Run has not listed the requests yet (or has not
	// started).
	ErrNotSynced = errs.New(prefix, "the requests are not listed yet")
	// ErrAPIServer: the API server did not answer the last list of the
	// requests (made within Config.APICheckInterval).
	ErrAPIServer = errs.New(prefix, "the API server does not answer")
	// ErrCAKey: the CA key's last signature failed, or its probe signature
	// failed, did not verify or did not come within the readiness check's
	// time.
	ErrCAKey = errs.New(prefix, "the CA key does not sign")
)

// probeMessage is what a probe signs (its SHA-256 digest, or itself for
// Ed25519): no certificate, nothing a verifier would take for one.
const probeMessage = "ksa podcert serve: probe of the CA key"

// apiCheckTimeout bounds the list of the requests Ready sends.
const apiCheckTimeout = 10 * time.Second

// Ready reports whether the controller can decide requests now (nil), or
// why not: it has listed the requests (ErrNotSynced), the API server
// answered its last list of them (ErrAPIServer), and the CA key works
// (ErrCAKey): its last signature, a certificate's or a probe's, succeeded
// within CAProbeInterval; otherwise CAKey signs a probe digest now, which
// must verify against its public key, within ctx. The list is sent again
// once APICheckInterval has passed since the last, its answer or error
// kept until then: however often Ready is called, the API server gets one
// request per interval at most. One list and one probe run at a time:
// concurrent checks wait for them. It is what a readiness probe asks.
func (c *Controller) Ready(ctx context.Context) error {
	w := c.watch.Load()
	if w == nil || !w.synced() {
		return ErrNotSynced
	}
	if err := c.apiAnswers(ctx, w); err != nil {
		return errs.Wrap(prefix, ErrAPIServer, "", err)
	}
	now := c.cfg.Now()
	_, key := c.signer()
	at, err := c.ca.last()
	switch {
	case err == nil && !at.IsZero() && now.Sub(at) < c.cfg.CAProbeInterval:
		return nil
	case key == nil && err != nil:
		return errs.Wrap(prefix, ErrCAKey, "", err)
	case key == nil:
		return nil
	}
	if err := c.probe(ctx, key); err != nil {
		return errs.Wrap(prefix, ErrCAKey, "", err)
	}
	return nil
}

// apiCheck is Ready's last list of the requests: when it was sent, and
// its error.
type apiCheck struct {
	mu  sync.Mutex
	at  time.Time
	err error
	// listing is the list under way, if any.
	listing *probeCall
}

// apiAnswers returns the error of the last list of the requests sent
// within APICheckInterval, or sends one (joining the one under way) and
// waits for its answer within ctx. The list runs on its own goroutine,
// bounded by apiCheckTimeout, so a check that gives up leaves one list,
// never more, to finish.
func (c *Controller) apiAnswers(ctx context.Context, w *watching) error {
	h := &c.api
	now := c.cfg.Now()
	h.mu.Lock()
	if age := now.Sub(h.at); !h.at.IsZero() && age >= 0 && age < c.cfg.APICheckInterval {
		err := h.err
		h.mu.Unlock()
		return err
	}
	call := h.listing
	if call == nil {
		call = &probeCall{done: make(chan struct{})}
		h.listing = call
		go func() {
			lctx, cancel := context.WithTimeout(context.Background(), apiCheckTimeout)
			defer cancel()
			err := w.api.ping(lctx, c.cfg.Client, c.cfg.Signer.SignerName())
			h.mu.Lock()
			h.at, h.err, h.listing = now, err, nil
			h.mu.Unlock()
			call.err = err
			close(call.done)
		}()
	}
	h.mu.Unlock()
	select {
	case <-call.done:
		return call.err
	case <-ctx.Done():
		return fmt.Errorf("no answer to the list yet: %w", ctx.Err())
	}
}

// caHealth is the CA key's last signature: when, and its error.
type caHealth struct {
	mu  sync.Mutex
	at  time.Time
	err error
	// probing is the probe under way, if any.
	probing *probeCall
}

type probeCall struct {
	done chan struct{}
	err  error
}

// record notes a signature made at at; an older one than the last
// recorded changes nothing.
func (h *caHealth) record(at time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if at.Before(h.at) {
		return
	}
	h.at, h.err = at, err
}

func (h *caHealth) last() (time.Time, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.at, h.err
}

// probe has key (the CA key signing now) sign probeMessage, or joins the probe under way, and
// waits for it within ctx. A key store that hangs keeps one goroutine
// waiting, never more.
func (c *Controller) probe(ctx context.Context, key crypto.Signer) error {
	h := &c.ca
	h.mu.Lock()
	call := h.probing
	if call == nil {
		call = &probeCall{done: make(chan struct{})}
		h.probing = call
		go func() {
			err := probeSignature(key)
			c.ca.record(c.cfg.Now(), err)
			if err != nil {
				c.stats.caKeyErrors.Add(1)
				c.log.Warn("the CA key failed a probe signature", "err", err)
				c.observe(Event{Kind: CAKeyFailed, Err: err})
			}
			h.mu.Lock()
			h.probing = nil
			h.mu.Unlock()
			call.err = err
			close(call.done)
		}()
	}
	h.mu.Unlock()
	select {
	case <-call.done:
		return call.err
	case <-ctx.Done():
		return fmt.Errorf("no probe signature yet: %w", ctx.Err())
	}
}

// probeSignature has key sign probeMessage and verifies the signature.
func probeSignature(key crypto.Signer) error {
	digest := sha256.Sum256([]byte(probeMessage))
	switch pub := key.Public().(type) {
	case *ecdsa.PublicKey:
		sig, err := key.Sign(rand.Reader, digest[:], crypto.SHA256)
		if err != nil {
			return err
		}
		if !ecdsa.VerifyASN1(pub, digest[:], sig) {
			return errors.New("the probe signature does not verify")
		}
	case *rsa.PublicKey:
		sig, err := key.Sign(rand.Reader, digest[:], crypto.SHA256)
		if err != nil {
			return err
		}
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig); err != nil {
			return fmt.Errorf("the probe signature does not verify: %w", err)
		}
	case ed25519.PublicKey:
		sig, err := key.Sign(rand.Reader, []byte(probeMessage), crypto.Hash(0))
		if err != nil {
			return err
		}
		if !ed25519.Verify(pub, []byte(probeMessage), sig) {
			return errors.New("the probe signature does not verify")
		}
	default:
		return fmt.Errorf("a %T key cannot be probed", pub)
	}
	return nil
}

// OldestUndecided returns when the oldest request of the signer name that
// is not decided yet was created, as the informer's cache holds them: the
// zero time when every request is decided, and before Run has listed
// them. A request the controller gave up on stays undecided until it
// changes, is resynced or is deleted.
func (c *Controller) OldestUndecided() time.Time {
	w := c.watch.Load()
	if w == nil || !w.synced() {
		return time.Time{}
	}
	var oldest time.Time
	for _, obj := range w.store.List() {
		if created, ok := w.api.undecided(obj, c.cfg.Signer.SignerName()); ok && (oldest.IsZero() || created.Before(oldest)) {
			oldest = created
		}
	}
	return oldest
}
