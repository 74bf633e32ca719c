package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

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

// parseSpecFile reads a credential-spec JSON file strictly: one JSON
// object, no member twice (encoding/json would keep the last silently),
// the GMSACredentialSpec schema's members only, and every member
// New-CredentialSpec writes. Errors name what is wrong without quoting the
// input (a token or a 60 KB line given by mistake stays out of them).
func parseSpecFile(name string, data []byte) (*credspec.CredentialSpec, error) {
	bad := func(format string, args ...any) error {
		return fail(nil, specFix, "%s is not a credential spec: %s", inputName(name), fmt.Sprintf(format, args...))
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if reason := checkJSONObject(data); reason != "" {
		return nil, bad("%s", reason)
	}
	spec, err := credspec.ParseCredentialSpec(data)
	if err != nil {
		var se *credspec.SchemaError
		if errors.As(err, &se) {
			return nil, bad("the member %s %s", quoted(strings.TrimPrefix(se.Path, credspec.ContentsField+".")), boundReason(se.Reason))
		}
		return nil, bad("it cannot be read as one")
	}
	if missing := missingMember(spec); missing != "" {
		return nil, bad("it has no %s", missing)
	}
	return spec, nil
}

// boundReason cuts a library's reason to a few hundred bytes.
func boundReason(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}

// missingMember names the first member New-CredentialSpec writes that spec
// lacks, or "".
func missingMember(spec *credspec.CredentialSpec) string {
	if len(spec.CMSPlugins) == 0 {
		return "CmsPlugins"
	}
	d := spec.DomainJoinConfig
	if d == nil {
		return "DomainJoinConfig"
	}
	for _, m := range []struct{ name, v string }{
		{"DnsName", d.DNSName}, {"DnsTreeName", d.DNSTreeName}, {"Guid", d.GUID},
		{"MachineAccountName", d.MachineAccountName}, {"NetBiosName", d.NetBIOSName}, {"Sid", d.SID},
	} {
		if m.v == "" {
			return "DomainJoinConfig." + m.name
		}
	}
	ad := spec.ActiveDirectoryConfig
	if ad == nil || len(ad.GroupManagedServiceAccounts) == 0 {
		return "ActiveDirectoryConfig.GroupManagedServiceAccounts"
	}
	for i, g := range ad.GroupManagedServiceAccounts {
		if g.Name == "" || g.Scope == "" {
			return fmt.Sprintf("ActiveDirectoryConfig.GroupManagedServiceAccounts[%d].Name and Scope", i)
		}
	}
	return ""
}

// checkJSONObject returns why data is not one JSON object whose members
// each appear once (names compared without regard to case, as
// encoding/json matches them), or "".
func checkJSONObject(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return "not a JSON object (" + jsonProblem(err) + ")"
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return "not a JSON object (it is " + jsonKind(tok) + ")"
	}
	if reason := checkMembers(dec, ""); reason != "" {
		return reason
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "not a JSON object (more follows the object)"
	}
	return ""
}

// checkMembers reads the rest of an object whose '{' was read; path names
// it in messages.
func checkMembers(dec *json.Decoder, path string) string {
	var seen []string
	for {
		tok, err := dec.Token()
		if err != nil {
			return "not a JSON object (" + jsonProblem(err) + ")"
		}
		if d, ok := tok.(json.Delim); ok && d == '}' {
			return ""
		}
		name, _ := tok.(string)
		member := name
		if path != "" {
			member = path + "." + name
		}
		for _, s := range seen {
			if strings.EqualFold(s, name) {
				return "the member " + quoted(member) + " appears twice"
			}
		}
		seen = append(seen, name)
		if reason := checkValue(dec, member); reason != "" {
			return reason
		}
	}
}

// checkValue reads one value; objects and arrays are checked through.
func checkValue(dec *json.Decoder, path string) string {
	tok, err := dec.Token()
	if err != nil {
		return "not a JSON object (" + jsonProblem(err) + ")"
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return ""
	}
	switch d {
	case '{':
		return checkMembers(dec, path)
	case '[':
		for i := 0; ; i++ {
			if !dec.More() {
				if _, err := dec.Token(); err != nil {
					return "not a JSON object (" + jsonProblem(err) + ")"
				}
				return ""
			}
			if reason := checkValue(dec, fmt.Sprintf("%s[%d]", path, i)); reason != "" {
				return reason
			}
		}
	}
	return "not a JSON object (unexpected " + string(d) + ")"
}

// jsonProblem says where a JSON reading error is, without its text (which
// may quote the input).
func jsonProblem(err error) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return "invalid character at byte " + strconv.FormatInt(se.Offset, 10)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "it ends early"
	}
	return "it cannot be read"
}

// jsonKind names the kind of a JSON token.
func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
