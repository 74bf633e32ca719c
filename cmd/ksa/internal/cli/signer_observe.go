package cli

import (
	"context"
	"log/slog"

	"google.golang.org/grpc/codes"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
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
		attrs = append(attrs, slog.String("error", oneLine(libText(ev.Err))))
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
