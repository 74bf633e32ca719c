package cli

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
)

func TestVersion(t *testing.T) {
	checkout := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ksa-go/ksa/cmd/ksa", Version: "(devel)"},
		Deps:     []*debug.Module{{Path: "github.com/ksa-go/ksa", Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "../.."}}},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-03-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	release := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ksa-go/ksa/cmd/ksa", Version: "v1.2.3"},
		Deps: []*debug.Module{{Path: "github.com/ksa-go/ksa", Version: "v1.2.0"}}}
	releaseOnCheckout := &debug.BuildInfo{Main: debug.Module{Path: "github.com/ksa-go/ksa/cmd/ksa", Version: "v1.2.3"},
		Deps: []*debug.Module{{Path: "github.com/ksa-go/ksa", Version: "v1.2.0", Replace: &debug.Module{Path: "../ksa"}}}}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		text string
		json string
	}{
		{name: "from a checkout: the library's declared version, (devel)", bi: checkout,
			text: "ksa " + ksa.Version + " (devel)\nmodule:   github.com/ksa-go/ksa/cmd/ksa\nlibrary:  github.com/ksa-go/ksa " + ksa.Version + " (devel)\nrevision: 0123abcd (modified)\ntime:     2026-03-01T00:00:00Z\ngo:       go1.26.8\n",
			json: `{"module":"github.com/ksa-go/ksa/cmd/ksa","version":"(devel)","library":"(devel)","declared_version":"` + ksa.Version + `","vcs_revision":"0123abcd","vcs_time":"2026-03-01T00:00:00Z","vcs_modified":true,"go":"go1.26.8"}`},
		{name: "a release", bi: release,
			text: "ksa v1.2.3\nmodule:   github.com/ksa-go/ksa/cmd/ksa\nlibrary:  github.com/ksa-go/ksa v1.2.0\ngo:       go1.26.8\n",
			json: `{"module":"github.com/ksa-go/ksa/cmd/ksa","version":"v1.2.3","library":"v1.2.0","declared_version":"` + ksa.Version + `","go":"go1.26.8"}`},
		{name: "a release whose library is a checkout", bi: releaseOnCheckout,
			text: "ksa v1.2.3\nmodule:   github.com/ksa-go/ksa/cmd/ksa\nlibrary:  github.com/ksa-go/ksa " + ksa.Version + " (devel)\n",
			json: `{"module":"github.com/ksa-go/ksa/cmd/ksa","version":"v1.2.3","library":"(devel)","declared_version":"` + ksa.Version + `"}`},
		{name: "no build information", bi: nil,
			text: "ksa " + ksa.Version + " (unknown)\nmodule:   github.com/ksa-go/ksa/cmd/ksa\n",
			json: `{"module":"github.com/ksa-go/ksa/cmd/ksa","version":"(unknown)","declared_version":"` + ksa.Version + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := func() (*debug.BuildInfo, bool) { return tc.bi, tc.bi != nil }
			for _, f := range []struct {
				args []string
				want string
			}{{nil, tc.text}, {[]string{"-o", "json"}, tc.json}} {
				var out bytes.Buffer
				a := &base.App{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &bytes.Buffer{}, ReadBuildInfo: read}
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
