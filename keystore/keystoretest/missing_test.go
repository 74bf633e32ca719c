package keystoretest_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/skipmark"
	"github.com/ksa-go/ksa/keystore/keystoretest"
)

// skipRecorder is a test whose Skip and Fatal record the message and end
// the goroutine, as the testing package's do.
type skipRecorder struct {
	testing.TB
	skipped bool
	msg     string
}

func (r *skipRecorder) Skip(args ...any) {
	r.skipped, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *skipRecorder) Fatal(args ...any) {
	r.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

// TestMissingSkipsWithMark: without its program, a test skips with, as
// its first line, the mark the runner of README.md's test command counts
// (go test shows a skip's message only with -v): what is missing and the
// command that installs it.
func TestMissingSkipsWithMark(t *testing.T) {
	empty := t.TempDir()
	for _, name := range []string{"PATH", "GOPATH", "HOME"} {
		t.Setenv(name, empty)
	}
	t.Setenv("GOBIN", "")
	t.Setenv("CI", "")
	for _, tt := range []struct {
		name  string
		start func(testing.TB)
		want  skipmark.Skip
	}{
		{
			name:  "SoftHSM2",
			start: func(tb testing.TB) { keystoretest.StartSoftHSM(tb) },
			want:  skipmark.Skip{Subject: "SoftHSM2", Missing: []string{"softhsm2-util"}, Install: keystoretest.SoftHSMInstall},
		},
		{
			name:  "local-kms",
			start: func(tb testing.TB) { keystoretest.StartLocalKMS(tb) },
			want:  skipmark.Skip{Subject: "local-kms", Missing: []string{"local-kms"}, Install: keystoretest.LocalKMSInstall},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &skipRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				tt.start(rec)
			}()
			<-done
			require.True(t, rec.skipped, "not skipped: %s", rec.msg)
			first, _, _ := strings.Cut(rec.msg, "\n")
			got, ok := skipmark.Parse(first)
			require.True(t, ok, "the first line is no mark: %q", first)
			assert.Equal(t, tt.want, got)
		})
	}
}
