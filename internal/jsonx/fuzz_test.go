package jsonx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/jsonx"
)

// readerSeeds are documents for FuzzReaderAgreesWithEncodingJSON: valid
// ones the Reader accepts, and ones it refuses although encoding/json
// accepts them (lone surrogates, invalid UTF-8, depth), or that both refuse.
var readerSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0.5e+10`, `true`, `false`, `null`,
	`{"iss":"https://kubernetes.default.svc","aud":["api","vault"],"exp":1700000000,"kubernetes.io":{"namespace":"default","pod":{"name":"p","uid":"u"}}}`,
	`{"keys":[{"kty":"RSA","e":"AQAB","n":"xyz","kid":"k1","alg":"RS256","use":"sig"}]}`,
	`"\" \\ \/ \b \f \n \r \t \u0000 \u00e9 \u20AC \ud83d\ude00"`,
	"\"é€😀\x7f\u2028\uFFFD\"",
	`{"a":1,"a":2,"A":3}`,
	" \t\r\n[ 1 , 2 ] \t\r\n",
	`[1,]`, `{"a":1,}`, `01`, `1.`, `.5`, `1e`, `-`, `+1`, `{} {}`, `nul`,
	`"\ud800"`, `"\udc00\ud800"`, `"\ud800\u0041"`, `"\x"`, `"\u12"`, `"abc`,
	"\"\xff\"", "\"\xed\xa0\x80\"", "\"\x01\"", "\ufeff{}", "[\x00]",
	strings.Repeat("[", jsonx.DefaultMaxDepth) + strings.Repeat("]", jsonx.DefaultMaxDepth),
	strings.Repeat("[", jsonx.DefaultMaxDepth+1) + strings.Repeat("]", jsonx.DefaultMaxDepth+1),
	strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40),
}

// FuzzReaderAgreesWithEncodingJSON holds the Reader to being a strict subset
// of encoding/json: every document it accepts, encoding/json accepts too
// and decodes to the same value; strings in particular decode identically.
func FuzzReaderAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := jsonx.NewReader(data, 0)
		skipErr := skipAll(&r)

		// The string-backed Reader must reach the same verdict.
		sr := jsonx.NewStringReader(string(data), 0)
		sErr := skipAll(&sr)
		require.Equal(t, skipErr == nil, sErr == nil)

		// Building a value walks the document with the typed methods
		// (Object, Array, String, Number, Bool, Null) instead of Skip.
		br := jsonx.NewReader(data, 0)
		got, buildErr := build(&br)
		if buildErr == nil {
			buildErr = br.End()
		}
		require.Equal(t, skipErr == nil, buildErr == nil, "Skip: %v, typed reads: %v", skipErr, buildErr)

		if skipErr != nil {
			require.ErrorIs(t, skipErr, jsonx.ErrSyntax)
			var se *jsonx.SyntaxError
			require.ErrorAs(t, skipErr, &se)
			require.GreaterOrEqual(t, se.Offset, 0)
			require.LessOrEqual(t, se.Offset, len(data))
			return
		}
		require.Equal(t, len(data), r.Offset())
		require.True(t, json.Valid(data), "the Reader accepted what encoding/json refuses: %q", data)

		// Accepted text is UTF-8 without lone surrogates, so encoding/json
		// decodes it without replacing anything: the values must be equal.
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		require.NoError(t, dec.Decode(&want))
		require.Equal(t, want, got)

		// And the string-backed reader reads the same strings.
		sr = jsonx.NewStringReader(string(data), 0)
		sgot, err := build(&sr)
		require.NoError(t, err)
		require.Equal(t, got, sgot)
	})
}

// build decodes one value the way encoding/json decodes into an any with
// UseNumber: later duplicate members win.
func build(r *jsonx.Reader) (any, error) {
	switch c := r.Peek(); c {
	case '{':
		o, err := r.Object()
		if err != nil {
			return nil, err
		}
		m := map[string]any{}
		for {
			name, ok, err := o.Next()
			if err != nil {
				return nil, err
			}
			if !ok {
				return m, nil
			}
			key := string(name)
			if !utf8.ValidString(key) {
				return nil, errors.New("the Reader returned a name that is not UTF-8")
			}
			v, err := build(r)
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
	case '[':
		a, err := r.Array()
		if err != nil {
			return nil, err
		}
		s := []any{}
		for {
			ok, err := a.Next()
			if err != nil {
				return nil, err
			}
			if !ok {
				return s, nil
			}
			v, err := build(r)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
	case '"':
		s, err := r.String()
		if err != nil {
			return nil, err
		}
		if !utf8.ValidString(s) {
			return nil, errors.New("the Reader returned a string that is not UTF-8")
		}
		return s, nil
	case 't', 'f':
		return r.Bool()
	case 'n':
		if r.Null() {
			return nil, nil
		}
		// Let Skip report the error for a bad literal.
		return nil, r.Skip()
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			n, err := r.Number()
			if err != nil {
				return nil, err
			}
			return json.Number(n), nil
		}
		return nil, r.Skip()
	}
}

// appendStringSeeds cover every escaping rule of AppendString.
var appendStringSeeds = []string{
	"", "plain", `"quoted" and \back\slashed/`, "\n\r\t\b\f\x00\x01\x1f\x7f",
	"<script>&amp;</script>", "\u2027\u2028\u2029\u202a", "é€😀\uFFFD",
	"\xff", "a\xffb", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf",
	"system:serviceaccount:default:builder",
}

// FuzzAppendString checks AppendString's output against encoding/json: the
// output is valid JSON; it is byte-identical to encoding/json's HTML-safe
// encoding once \b and \f are spelled as go-jose spells them (go-jose
// itself is not a dependency of this module); and it
// decodes, with both encoding/json and the Reader, to the input with each
// invalid UTF-8 byte replaced by U+FFFD.
func FuzzAppendString(f *testing.F) {
	for _, s := range appendStringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := jsonx.AppendString([]byte("prefix"), s)
		require.True(t, bytes.HasPrefix(out, []byte("prefix")))
		out = out[len("prefix"):]
		require.True(t, json.Valid(out), "%q", out)

		// With GOEXPERIMENT=jsonv2, encoding/json writes each invalid byte
		// as a raw U+FFFD rather than \ufffd; the table tests pin
		// AppendString's output for those.
		if !stdlibJSONv2 || utf8.ValidString(s) {
			std := stdlibEncode(t, s)
			if !strings.ContainsAny(s, "\b\f") {
				assert.Equal(t, string(std), string(out))
			}
			assert.Equal(t, string(joseShortEscapes(std)), string(out))
		}

		// Each invalid byte becomes one U+FFFD, as ranging over a string
		// decodes it.
		want := string([]rune(s))
		var got string
		require.NoError(t, json.Unmarshal(out, &got))
		assert.Equal(t, want, got)
		r := jsonx.NewReader(out, 0)
		got, err := r.String()
		require.NoError(t, err)
		require.NoError(t, r.End())
		assert.Equal(t, want, got)
		if utf8.ValidString(s) {
			assert.Equal(t, s, got)
		}
	})
}

// stdlibEncode returns encoding/json's encoding of s with HTML escaping on
// (its default), without the newline Encoder adds.
func stdlibEncode(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(true)
	require.NoError(t, enc.Encode(s))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// joseShortEscapes rewrites the \b and \f escapes encoding/json writes into
// the \u0008 and \u000c go-jose v2 writes, leaving every other escape
// (including an escaped backslash followed by b or f) alone.
func joseShortEscapes(enc []byte) []byte {
	out := make([]byte, 0, len(enc)+8)
	for i := 0; i < len(enc); i++ {
		if enc[i] != '\\' || i+1 == len(enc) {
			out = append(out, enc[i])
			continue
		}
		i++
		switch enc[i] {
		case 'b':
			out = append(out, `\u0008`...)
		case 'f':
			out = append(out, `\u000c`...)
		default:
			out = append(out, '\\', enc[i])
		}
	}
	return out
}
