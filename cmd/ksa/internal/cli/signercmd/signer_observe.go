package signercmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/ksaprom"
)

// signerObserver turns what the signer reports into log lines and
// metrics.
type signerObserver struct {
	log *slog.Logger
	// metrics is nil until the ring exists (the ring's first changes come
	// before).
	metrics *ksaprom.SignerMetrics
}

// request logs and counts a request or probe: a Sign or probe that
// succeeded at debug level, one refused at warn level (the claims) or
// error level (the key store); FetchKeys and Metadata at debug level.
func (o *signerObserver) request(ev grpcserver.Event) {
	if o.metrics != nil {
		o.metrics.ObserveRequest(ksaprom.SignerRequest{Method: ev.Method, Code: ev.Code.String(), KeyID: ev.KeyID, Err: ev.Err, Duration: ev.Duration})
	}
	level := slog.LevelDebug
	switch ev.Code {
	case codes.OK:
	case codes.InvalidArgument, codes.Canceled, codes.DeadlineExceeded:
		level = slog.LevelWarn
	default:
		level = slog.LevelError
	}
	ctx := context.Background()
	if !o.log.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("method", ev.Method)}
	if ev.RequestID != "" {
		attrs = append(attrs, slog.String("request_id", ev.RequestID))
	}
	if ev.KeyID != "" {
		attrs = append(attrs, slog.String("kid", ev.KeyID))
	}
	if ev.Subject != "" {
		attrs = append(attrs, slog.String("sub", ev.Subject), slog.String("jti", ev.TokenID))
	}
	attrs = append(attrs, slog.String("code", ev.Code.String()), slog.Duration("duration", ev.Duration))
	if ev.APIVersion != "" {
		attrs = append(attrs, slog.String("api", ev.APIVersion))
	}
	if ev.Err != nil {
		attrs = append(attrs, slog.String("error", base.OneLine(ksa.ErrorText(ev.Err))))
	}
	msg := "answered"
	switch {
	case ev.Method == grpcserver.MethodProbe && ev.Err == nil:
		msg = "the key store answered a probe"
	case ev.Method == grpcserver.MethodProbe:
		msg = "the key store failed a probe"
	case ev.Method == grpcserver.MethodSign && ev.Err == nil:
		msg = "signed"
	case ev.Method == grpcserver.MethodSign:
		msg = "sign refused"
	}
	o.log.LogAttrs(ctx, level, msg, attrs...)
}

// change logs and counts a change of the ring.
func (o *signerObserver) change(c extsigner.RingChange) {
	if o.metrics != nil {
		o.metrics.ObserveChange(c)
	}
	if c.Cause == extsigner.ChangeUpdate {
		return // the reload's own line says it
	}
	o.log.Info("ring changed", "cause", c.Cause, "at", c.At, "primary", c.Primary, "previous_primary", c.PreviousPrimary,
		"keys", describeKeys(c.Keys), "data_timestamp", c.DataTimestamp)
}

// reload counts a reload of the ring file.
func (o *signerObserver) reload(err error) {
	if o.metrics != nil {
		o.metrics.ObserveReload(err)
	}
}

// ringReload logs and counts an attempt to apply the ring file: a reload,
// or a refusal (logged when it says something new).
func (o *signerObserver) ringReload(path string, r extsigner.RingReload) {
	o.reload(r.Err)
	if r.Err == nil {
		primary := ""
		for _, k := range r.Keys {
			if k.Role == extsigner.RolePrimary {
				primary = k.Key.KeyID
			}
		}
		o.log.Info("ring file reloaded", "file", path, "primary", primary, "keys", describeKeys(r.Keys))
		return
	}
	err := r.Err
	var re *extsigner.RingFileReadError
	if errors.As(err, &re) {
		err = keyflags.RingFileReadError(path, err)
	}
	if !r.Repeated {
		o.log.Error("ring file refused: serving the last good ring", "file", path, "error", base.OneLine(ksa.ErrorText(err)))
	}
	if errors.Is(r.Err, keystore.ErrLoginRefused) {
		o.log.Error("a key store refused the PIN: the ring file is not tried again until it or a PIN file it names changes", "file", path)
	}
}

// ringCheck counts a check of the ring file that ended.
func (o *signerObserver) ringCheck(at time.Time) {
	if o.metrics != nil {
		o.metrics.ObserveRingCheck(at)
	}
}

// refusalLogInterval is the least time between two lines about refused
// connections, after the first.
const refusalLogInterval = time.Minute

// refusalLog logs the connections --allowed-uid refused, so that a local
// user who connects in a loop cannot flood the log: the first at once,
// then at most one line per refusalLogInterval, which says how many were
// refused since the last line. Every refusal is counted in the metrics.
type refusalLog struct {
	log     *slog.Logger
	now     func() time.Time
	metrics *ksaprom.SignerMetrics

	mu sync.Mutex
	// next is when a refusal may be logged again; unlogged counts the
	// refusals since the last line, from since.
	next     time.Time
	unlogged int
	since    time.Time
}

// refused is the plug for extsigner.ListenConfig.OnRefused.
func (r *refusalLog) refused(uid uint32, err error) {
	if r.metrics != nil {
		r.metrics.ObserveRefusedConnection()
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.next.IsZero() && now.Before(r.next) {
		if r.unlogged == 0 {
			r.since = now
		}
		r.unlogged++
		return
	}
	r.next = now.Add(refusalLogInterval)
	attrs := []any{}
	msg := fmt.Sprintf("refused a connection from uid %d (not an --allowed-uid)", uid)
	if err != nil {
		msg = "refused a connection: " + base.OneLine(ksa.ErrorText(err))
		attrs = append(attrs, "error", base.OneLine(ksa.ErrorText(err)))
	} else {
		attrs = append(attrs, "uid", uid)
	}
	if r.unlogged > 0 {
		msg += fmt.Sprintf("; %d more refused since %s", r.unlogged, r.since.UTC().Format(time.RFC3339))
		attrs = append(attrs, "unlogged", r.unlogged)
		r.unlogged = 0
	} else {
		msg += fmt.Sprintf("; further refusals are logged at most once every %v", refusalLogInterval)
	}
	r.log.Warn(msg, attrs...)
}

// flush logs the refusals not logged yet, when the signer stops.
func (r *refusalLog) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unlogged > 0 {
		r.log.Warn(fmt.Sprintf("refused %d more connections since %s", r.unlogged, r.since.UTC().Format(time.RFC3339)), "unlogged", r.unlogged)
		r.unlogged = 0
	}
}

// The reasons /readyz answers: classes, never details (a key store's
// module, token, key or PIN file).
var (
	errKeyStoreNotReady = errors.New("the key store has not signed recently")
	errRingFileStalled  = errors.New("the ring file has not been checked recently")
)

// signerReadiness is the readiness check of "ksa signer serve"'s /readyz:
// the key store answered recently and, with --ring, the ring file is being
// checked. It answers anyone who can reach --ops-addr, so it says which
// check failed and nothing more; the detail goes to the log, once per
// change.
type signerReadiness struct {
	log *slog.Logger
	// keyStore is the server's Ready; ringFile, nil without --ring,
	// reports a ring file not checked recently.
	keyStore, ringFile func() error

	mu     sync.Mutex
	logged string // the detail last logged
}

// check is the plug for ops.Config.Ready.
func (r *signerReadiness) check(context.Context) error {
	class, detail := error(nil), ""
	if err := r.keyStore(); err != nil {
		class, detail = errKeyStoreNotReady, base.OneLine(ksa.ErrorText(err))
	} else if r.ringFile != nil {
		if err := r.ringFile(); err != nil {
			class, detail = errRingFileStalled, base.OneLine(ksa.ErrorText(err))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if detail != r.logged {
		if class != nil {
			r.log.Warn("not ready: "+class.Error(), "reason", detail)
		} else {
			r.log.Info("ready")
		}
		r.logged = detail
	}
	return class
}
