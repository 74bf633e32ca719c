package skipmark

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSkip(t *testing.T) {
	for _, tt := range []struct {
		skip Skip
		line string
	}{
		{
			skip: Skip{Subject: "controlplane", Missing: []string{"etcd", "kube-apiserver v1.37.2"}, Install: ".ci/install-controlplane.sh"},
			line: "controlplane: skipped (etcd, kube-apiserver v1.37.2 not found); install them with .ci/install-controlplane.sh",
		},
		{
			skip: Skip{Subject: "SoftHSM2", Missing: []string{"softhsm2-util"}, Install: "apt-get install -y softhsm2"},
			line: "SoftHSM2: skipped (softhsm2-util not found); install it with apt-get install -y softhsm2",
		},
		{
			skip: Skip{Subject: "control plane", Reason: "unsupported operating system"},
			line: "control plane: skipped (unsupported operating system)",
		},
	} {
		t.Run(tt.line, func(t *testing.T) {
			assert.Equal(t, tt.line, tt.skip.String())
			for _, around := range [][2]string{{"", ""}, {"    lifecycle_test.go:12: ", ""}, {"        > [!softhsm] skip '", "'"}, {`msg := "`, `"`}} {
				prefix := around[0]
				got, ok := Parse(prefix + tt.line + around[1])
				assert.True(t, ok, prefix)
				assert.Equal(t, tt.skip, got, prefix)
			}
		})
	}
	for _, line := range []string{"", "controlplane: skipped (etcd not found", "skipped (etcd not found)", ": skipped (etcd not found)", "    x_test.go:3: : skipped (a not found)"} {
		_, ok := Parse(line)
		assert.False(t, ok, line)
	}
}

// skipLine is a testscript skip command with its message.
var skipLine = regexp.MustCompile(`(?m)^\s*(?:\[[^]]*\]\s*)*skip\s+'([^']*)'`)

// TestScriptsSkipWithMarks: every skip of the ksa command's scripts
// (another module's test data, which cannot import this package) says
// what is missing and how to install it, as a line Parse reads.
func TestScriptsSkipWithMarks(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("..", "..", "cmd", "ksa", "testdata", "*", "*.txtar"))
	require.NoError(t, err)
	if len(scripts) == 0 {
		t.Skip("cmd/ksa is a module of its own, absent from a download of this one")
	}
	n := 0
	for _, f := range scripts {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range skipLine.FindAllStringSubmatch(string(b), -1) {
			s, ok := Parse(m[1])
			if assert.True(t, ok, "%s: skip %q is no mark", f, m[1]) {
				assert.NotEmpty(t, s.Missing, "%s: %q", f, m[1])
				assert.NotEmpty(t, s.Install, "%s: %q", f, m[1])
				assert.Equal(t, m[1], s.String(), "%s", f)
			}
			n++
		}
	}
	assert.Positive(t, n)
}
