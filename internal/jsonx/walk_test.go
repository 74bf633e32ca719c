package jsonx_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/jsonx"
)

func TestWalk(t *testing.T) {
	for _, tc := range []struct {
		name    string
		doc     string
		skip    string
		want    []string
		wantErr error
	}{
		{name: "nested", doc: `{"a":{"b":[1,{"c":2}],"d e":3},"f":null}`,
			want: []string{"$ a", "$.a b", "$.a.b[1] c", "$.a d e", "$ f"}},
		{name: "skipped value is not walked", doc: `{"a":{"b":1},"c":{"d":2}}`, skip: "a",
			want: []string{"$ a", "$ c", "$.c d"}},
		{name: "escaped names", doc: `{"\u0064":1}`, want: []string{"$ d"}},
		{name: "top-level array", doc: `[{"a":1},[{"b":2}]]`, want: []string{"$[0] a", "$[1][0] b"}},
		{name: "scalar", doc: `"x"`},
		{name: "duplicate at the top", doc: `{"a":1,"a":2}`, want: []string{"$ a", "$ a (again)"}},
		{name: "duplicate deep", doc: `{"a":[{"b":1,"b":1}]}`, want: []string{"$ a", "$.a[0] b", "$.a[0] b (again)"}},
		{name: "duplicate by escape", doc: `{"a":1,"\u0061":2}`, want: []string{"$ a", "$ a (again)"}},
		{name: "same name in two objects", doc: `{"a":{"x":1},"b":{"x":1}}`, want: []string{"$ a", "$.a x", "$ b", "$.b x"}},
		{name: "invalid UTF-8", doc: "{\"a\":\"\xff\"}", wantErr: jsonx.ErrSyntax},
		{name: "lone surrogate", doc: `{"a":"\ud800"}`, wantErr: jsonx.ErrSyntax},
		{name: "trailing data", doc: `{} {}`, wantErr: jsonx.ErrSyntax},
		{name: "too deep", doc: strings.Repeat("[", 40) + strings.Repeat("]", 40), wantErr: jsonx.ErrTooDeep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := jsonx.Walk([]byte(tc.doc), 0, func(m jsonx.Member) bool {
				line := m.Path + " " + m.Name
				if m.Repeated {
					line += " (again)"
				}
				got = append(got, line)
				return m.Name == tc.skip
			})
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				var se *jsonx.SyntaxError
				assert.True(t, errors.As(err, &se))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
