package base_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/clitest"
)

func TestTermSafe(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{name: "plain", in: "system:serviceaccount:prod:billing", want: "system:serviceaccount:prod:billing"},
		{name: "spaces and punctuation", in: `a "quoted" b, c (d)`, want: `a "quoted" b, c (d)`},
		{name: "letters of any script", in: "café 日本", want: "café 日本"},
		{name: "a valid replacement character", in: "a\uFFFDb", want: "a\uFFFDb"},
		{name: "empty", in: "", want: ""},
		{name: "ESC", in: "\x1b[2J", want: `"\x1b[2J"`},
		{name: "OSC 8 link", in: "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", want: `"\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"`},
		{name: "CR", in: "a\rstate: VERIFIED", want: `"a\rstate: VERIFIED"`},
		{name: "LF", in: "a\nstate: VERIFIED", want: `"a\nstate: VERIFIED"`},
		{name: "tab", in: "a\tb", want: `"a\tb"`},
		{name: "C0 bell", in: "a\x07", want: `"a\a"`},
		{name: "DEL", in: "a\x7f", want: `"a\x7f"`},
		{name: "C1 CSI", in: "a\u009b2J", want: `"a\u009b2J"`},
		{name: "bidi override", in: "abc\u202Egpj.exe", want: `"abc\u202egpj.exe"`},
		{name: "bidi isolate", in: "\u2066x\u2069", want: `"\u2066x\u2069"`},
		{name: "line separator", in: "a\u2028b", want: `"a\u2028b"`},
		{name: "invalid UTF-8", in: "a\xffb", want: `"a\xffb"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := base.TermSafe(tc.in)
			assert.Equal(t, tc.want, got)
			clitest.AssertTerminalSafe(t, got)
		})
	}
}
