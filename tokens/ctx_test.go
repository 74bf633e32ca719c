package tokens_test

import (
	"context"
	"testing"
)

var contextCanceled = context.Canceled

func contextWithCancel(t testing.TB) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}
