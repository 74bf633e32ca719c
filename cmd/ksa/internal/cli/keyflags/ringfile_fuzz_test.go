package keyflags

import (
	"errors"
	"testing"

	"github.com/ksa-go/ksa/extsigner"
)

// FuzzParseRingFile feeds arbitrary ring files, YAML or JSON, to the
// command's reader: it never panics, refuses with
// extsigner.ErrInvalidRingFile, and what it accepts has keys.
func FuzzParseRingFile(f *testing.F) {
	for _, s := range []string{
		"keys:\n- key: /etc/ksa/sa.key\n  primary: \"2027-01-01T00:00:00Z\"\n",
		"maxTokenLifetime: 1h\nkeys:\n- key: a\n  primary: 2027-01-01T00:00:00Z\n- publicKeys: b\n",
		`{"keys":[{"key":"/k","primary":"2027-01-01T00:00:00Z"}]}`,
		"keys: [", "keys: &a [*a]", "- 1\n- 2", "", "keys:\n- key: a\n  primary: 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rf, err := ParseRingFile(data)
		if err != nil {
			if !errors.Is(err, extsigner.ErrInvalidRingFile) {
				t.Fatalf("refused without ErrInvalidRingFile: %v", err)
			}
			return
		}
		if len(rf.Keys) == 0 {
			t.Fatal("a ring file without keys accepted")
		}
	})
}
