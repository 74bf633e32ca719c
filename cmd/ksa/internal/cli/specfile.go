package cli

import (
	"errors"
	"strconv"
	"strings"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credspec"
)

// maxQuoted bounds a value an error quotes, in bytes.
const maxQuoted = 64

// quoted quotes a value for an error: Go-quoted, cut to maxQuoted bytes
// (on a rune boundary) with "..." when longer, so that an error never
// echoes a whole input.
func quoted(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// specFix is the advice for a credential-spec file that cannot be used.
const specFix = "pass the credential-spec JSON file New-CredentialSpec wrote, unchanged"

// parseSpecFile reads a credential-spec JSON file with the library's
// strict reader (one JSON object, no member twice, the schema's members
// only, every member New-CredentialSpec writes); its errors quote no input
// but a member's name, so a token or a 60 KB line given by mistake stays
// out of them.
func parseSpecFile(name string, data []byte) (*credspec.CredentialSpec, error) {
	spec, err := credspec.ParseCredentialSpec(data)
	if err == nil {
		return spec, nil
	}
	reason := ksa.ErrorText(err)
	var se *credspec.SchemaError
	if errors.As(err, &se) {
		reason = "the member " + quoted(strings.TrimPrefix(se.Path, credspec.ContentsField+".")) + " " + se.Reason
	}
	return nil, fail(nil, specFix, "%s is not a credential spec: %s", inputName(name), boundReason(reason))
}

// boundReason cuts a library's reason to a few hundred bytes.
func boundReason(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}
