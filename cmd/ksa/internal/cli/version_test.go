package cli

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersion(t *testing.T) {
	checkout := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ksa-go/ksa/cmd/ksa", Version: "(devel)"},
		Deps:     []*debug.Module{{Path: "github.com/ksa-go/ksa", Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "../.."}}},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-03-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	release := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ksa-go/ksa/cmd/ksa", Version: "v1.2.3"},
		Deps: []*debug.Module{{Path: "github.com/ksa-go/ksa", Version: "v1.2.0"}}}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		text string
		json string
	}{
		{name: "from a checkout", bi: checkout,
			text: "ksa (devel)\nmodule:   github.com/ksa-go/ksa/cmd/ksa\nlibrary:  github.com/ksa-go/ksa (devel)\nrevision: 0123abcd (modified)\ntime:     2026-03-01T00:00:00Z\ngo:       go1.26.8\n",
			json: `{"module":"github.com/ksa-go/ksa/cmd/ksa","version":"(devel)","library":"(devel)","vcs_revision":"0123abcd","vcs_time":"2026-03-01T00:00:00Z","vcs_modified":true,"go":"go1.26.8"}`},
		{name: "a release", bi: release,
			text: "ksa v1.2.3\nmodule:   github.com/ksa-go/ksa/cmd/ksa\nlibrary:  github.com/ksa-go/ksa v1.2.0\ngo:       go1.26.8\n",
			json: `{"module":"github.com/ksa-go/ksa/cmd/ksa","version":"v1.2.3","library":"v1.2.0","go":"go1.26.8"}`},
		{name: "no build information", bi: nil,
			text: "ksa (unknown)\nmodule:   github.com/ksa-go/ksa/cmd/ksa\n",
			json: `{"module":"github.com/ksa-go/ksa/cmd/ksa","version":"(unknown)"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := func() (*debug.BuildInfo, bool) { return tc.bi, tc.bi != nil }
			for _, f := range []struct {
				args []string
				want string
			}{{nil, tc.text}, {[]string{"-o", "json"}, tc.json}} {
				var out bytes.Buffer
				a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &bytes.Buffer{}, readBuildInfo: read}
				root := newRoot(a)
				root.SetArgs(append([]string{"version"}, f.args...))
				assert.NoError(t, root.Execute())
				if f.args == nil {
					assert.Equal(t, f.want, out.String())
				} else {
					assert.JSONEq(t, f.want, out.String())
				}
			}
		})
	}
}
