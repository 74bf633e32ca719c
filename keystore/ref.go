package keystore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Scheme names where a referenced key lives.
type Scheme string

// The schemes of a reference: a PEM file, or a key store named by the URI
// scheme step-ca and its crypto library use.
const (
	// SchemeFile is a PEM key file, named by its path (there is no
	// "file:" URI: the reference is the path itself).
	SchemeFile Scheme = "file"
	// SchemePKCS11 is a key on a PKCS #11 token (an HSM, SoftHSM2, a
	// YubiHSM, Luna, CloudHSM), named by an RFC 7512 URI.
	SchemePKCS11 Scheme = "pkcs11"
	// SchemeAWSKMS is a key in AWS KMS.
	SchemeAWSKMS Scheme = "awskms"
	// SchemeCloudKMS is a key version in Google Cloud KMS.
	SchemeCloudKMS Scheme = "cloudkms"
	// SchemeAzureKMS is a key in Azure Key Vault.
	SchemeAzureKMS Scheme = "azurekms"
)

// MaxRefBytes bounds a reference: 4096 bytes.
const MaxRefBytes = 4096

// redacted replaces the value of a secret attribute in Ref.String.
const redacted = "REDACTED"

// Ref is a reference to a signing key: the path of a PEM key file, or a
// URI naming a key in a key store. It is parsed from a flag or a file by
// [ParseRef] (a key that exists) or [ParseNewKeyRef] (a key to create),
// which check it completely before any key store is asked; an [Opener]
// opens the key it names. Its String never shows a secret. The zero Ref
// names nothing.
type Ref struct {
	scheme Scheme
	path   string
	attrs  []attr
	// opaque: a cloudkms URI written as cloudkms:projects/..., its one
	// attribute the resource.
	opaque bool
}

// attr is an attribute of a URI: its name and value decoded, and as
// written.
type attr struct {
	name, value string
	raw         string
	query       bool
}

// Scheme returns where the key lives; "" for the zero Ref.
func (r Ref) Scheme() Scheme { return r.scheme }

// Path returns the path of a PEM key file; "" for a key in a key store.
func (r Ref) Path() string { return r.path }

// Attr returns the decoded value of a URI attribute ("token", "key-id",
// "vault"; "resource" for a cloudkms name written without attributes), or
// "" when the reference does not have it.
func (r Ref) Attr(name string) string {
	for _, a := range r.attrs {
		if a.name == name {
			return a.value
		}
	}
	return ""
}

// has reports whether the reference has attribute name.
func (r Ref) has(name string) bool {
	for _, a := range r.attrs {
		if a.name == name {
			return true
		}
	}
	return false
}

// ObjectID returns the bytes of a pkcs11 reference's id attribute (the
// key's CKA_ID), read as step-ca reads it: a value of hexadecimal digits
// (optionally with a 0x prefix or colons between bytes: 0a0b, 0x0a0b,
// 0a:0b) is decoded as hex; any other value, %-encoded bytes such as
// %0a%0b included, is taken byte for byte. Nil without an id.
func (r Ref) ObjectID() []byte {
	if !r.has("id") {
		return nil
	}
	return objectID(r.Attr("id"))
}

// String returns the reference as written, with the scheme in lower case
// and the value of a secret attribute (pin-value, client-secret) or of one
// the scheme does not have replaced by REDACTED; a file reference is its
// path.
func (r Ref) String() string {
	switch {
	case r.scheme == SchemeFile:
		return r.path
	case r.scheme == "":
		return ""
	case r.opaque:
		return string(r.scheme) + ":" + r.attrs[0].raw
	}
	var b strings.Builder
	b.WriteString(string(r.scheme))
	b.WriteByte(':')
	var query []string
	first := true
	for _, a := range r.attrs {
		raw := a.raw
		if secretAttrs[a.name] || !slices.Contains(schemeAttrs[r.scheme], a.name) {
			name, _, _ := strings.Cut(a.raw, "=")
			raw = name + "=" + redacted
		}
		if a.query {
			query = append(query, raw)
			continue
		}
		if !first {
			b.WriteByte(';')
		}
		first = false
		b.WriteString(raw)
	}
	if len(query) > 0 {
		b.WriteByte('?')
		b.WriteString(strings.Join(query, "&"))
	}
	return b.String()
}

// With returns a copy of a URI reference with attribute name set to value
// (added to the path part when the reference lacks it), or without the
// attribute when value is empty. The result is not checked: parse its
// String to check it.
func (r Ref) With(name, value string) Ref {
	if r.scheme == SchemeFile || r.scheme == "" {
		return r
	}
	out := r
	out.attrs = nil
	found := false
	for _, a := range r.attrs {
		if a.name != name {
			out.attrs = append(out.attrs, a)
			continue
		}
		found = true
		if value == "" {
			continue
		}
		if r.opaque {
			a.raw = escape(value, true)
		} else {
			a.raw = name + "=" + escape(value, false)
		}
		a.value = value
		out.attrs = append(out.attrs, a)
	}
	if !found && value != "" {
		if r.opaque {
			// A second attribute needs the attribute form.
			out.opaque = false
			out.attrs[0].raw = "resource=" + escape(out.attrs[0].value, false)
		}
		out.attrs = append(out.attrs, attr{name: name, value: value, raw: name + "=" + escape(value, false)})
	}
	if out.opaque && len(out.attrs) == 0 {
		out.opaque = false
	}
	return out
}

// escape %-encodes what a value cannot hold as written: everything but
// letters, digits and -._~/:@ (and "," in an opaque cloudkms name).
func escape(v string, opaque bool) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			strings.IndexByte("-._~/:@", c) >= 0, opaque && c == ',':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// ParseRef parses a reference to an existing signing key: a PEM file path,
// or a URI of one of the key-store schemes (the scheme in any case):
//
//	# references
//	pkcs11:module-path=/usr/lib/softhsm/libsofthsm2.so;token=ksa;id=0a0b;object=sa?pin-source=/run/secrets/pin
//	awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab;region=eu-west-1
//	cloudkms:projects/P/locations/L/keyRings/R/cryptoKeys/K/cryptoKeyVersions/1
//	azurekms:name=sa;vault=my-vault
//
// A string that does not start with a scheme (letters, digits, "+", "-",
// ".", at least two, then ":") is a path; a file whose name starts with
// one is written ./name. The attributes of each scheme are listed in the
// package documentation; an attribute ksa does not read, or one given
// twice, is refused, as are secrets in the reference (pin-value,
// client-secret): a PIN comes from pin-source (a file, or env:NAME for an
// environment variable). Errors are *[RefError]s.
func ParseRef(s string) (Ref, error) { return parse(s, false) }

// ParseNewKeyRef parses a reference to a key to create in a key store, as
// [ParseRef] does, with the attributes creating needs: pkcs11 both id and
// object; awskms a name (the key's description and alias prefix) and no
// key-id; cloudkms a cryptoKey without a version (Cloud KMS numbers the
// versions); azurekms name and vault without a version. A PEM file path
// is accepted as it is.
func ParseNewKeyRef(s string) (Ref, error) { return parse(s, true) }

// anyRefFix is the advice for a reference that names nothing usable.
const anyRefFix = "give a PEM key file path, or a key-store URI (pkcs11:..., awskms:..., cloudkms:... or azurekms:...; write ./NAME for a file whose name has a colon)"

func parse(s string, create bool) (Ref, error) {
	switch {
	case s == "":
		return Ref{}, &RefError{Reason: "is empty", Fix: anyRefFix}
	case len(s) > MaxRefBytes:
		return Ref{}, &RefError{Reason: fmt.Sprintf("is %d bytes, over the %d-byte limit", len(s), MaxRefBytes), Fix: anyRefFix}
	}
	scheme, rest, ok := splitScheme(s)
	if !ok {
		if strings.ContainsRune(s, 0) {
			return Ref{}, &RefError{Reason: "holds a NUL byte", Fix: anyRefFix}
		}
		return Ref{scheme: SchemeFile, path: s}, nil
	}
	switch scheme {
	case SchemePKCS11, SchemeAWSKMS, SchemeCloudKMS, SchemeAzureKMS:
	default:
		return Ref{}, &RefError{Reason: "has an unknown scheme " + strconv.Quote(string(scheme)), Fix: anyRefFix}
	}
	r := Ref{scheme: scheme}
	var err error
	if scheme == SchemeCloudKMS && strings.HasPrefix(rest, "projects/") {
		r.opaque = true
		var a attr
		a, err = opaqueResource(rest)
		r.attrs = []attr{a}
	} else {
		r.attrs, err = splitAttrs(scheme, rest)
	}
	if err != nil {
		return Ref{}, err
	}
	// Every name first: a refusal below shows the reference, which then
	// holds known attributes only, the secret ones redacted (a misspelt
	// PIN-VALUE= or Client-Secret= is refused here, by its name alone).
	known := schemeAttrs[scheme]
	for _, a := range r.attrs {
		if !slices.Contains(known, a.name) {
			return Ref{}, &RefError{Reason: fmt.Sprintf("has an attribute %s that ksa does not read", strconv.Quote(a.name)),
				Fix: fmt.Sprintf("remove it; a %s reference takes %s", scheme, strings.Join(readable(known), ", "))}
		}
	}
	for i, a := range r.attrs {
		for _, b := range r.attrs[:i] {
			if b.name == a.name {
				return Ref{}, r.refError(fmt.Sprintf("gives %s twice", a.name), "keep one")
			}
		}
		if a.value == "" {
			return Ref{}, r.refError(fmt.Sprintf("has an empty %s", a.name), "give it a value or remove it")
		}
	}
	switch scheme {
	case SchemePKCS11:
		err = r.checkPKCS11(create)
	case SchemeAWSKMS:
		err = r.checkAWSKMS(create)
	case SchemeCloudKMS:
		err = r.checkCloudKMS(create)
	case SchemeAzureKMS:
		err = r.checkAzureKMS(create)
	}
	if err != nil {
		return Ref{}, err
	}
	return r, nil
}

// refError reports what is wrong with r, showing r without its secrets.
func (r Ref) refError(reason, fix string) *RefError {
	return &RefError{Ref: r.String(), Reason: reason, Fix: fix}
}

// splitScheme returns the scheme of s, lower-cased, and what follows the
// colon, when s starts with one: a letter, then letters, digits, "+", "-"
// or ".", two characters at least (one would be a Windows drive letter).
func splitScheme(s string) (Scheme, string, bool) {
	i := strings.IndexByte(s, ':')
	if i < 2 {
		return "", "", false
	}
	for j := 0; j < i; j++ {
		c := s[j]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if j == 0 && !letter || !letter && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return "", "", false
		}
	}
	return Scheme(strings.ToLower(s[:i])), s[i+1:], true
}

// splitAttrs splits the attributes of a URI: name=value pairs separated by
// ";" before an optional "?", by "&" after it, each %-decoded. Nothing of
// a value is quoted in an error: a misspelt pin-value would be.
func splitAttrs(scheme Scheme, rest string) ([]attr, error) {
	pathPart, queryPart, hasQuery := strings.Cut(rest, "?")
	if pathPart == "" && queryPart == "" {
		return nil, &RefError{Reason: fmt.Sprintf("is a %s URI without attributes", scheme), Fix: "name the key: " + schemeExample[scheme]}
	}
	if strings.Contains(queryPart, "?") {
		return nil, &RefError{Reason: "has a second raw '?'", Fix: "write %3F for a '?' in a value"}
	}
	var attrs []attr
	n := 0
	for _, part := range []struct {
		text, sep, other string
		query            bool
	}{{pathPart, ";", "&", false}, {queryPart, "&", ";", true}} {
		if part.text == "" && (part.query || hasQuery) {
			continue
		}
		for _, piece := range strings.Split(part.text, part.sep) {
			n++
			if strings.Contains(piece, part.other) {
				// RFC 7512 allows it, but step-ca's parser splits
				// attributes at both.
				return nil, &RefError{Reason: fmt.Sprintf("has a raw %q in attribute #%d", part.other, n), Fix: fmt.Sprintf("separate attributes with %q before the '?' and %q after it; write %%%02X for the character in a value", ";", "&", part.other[0])}
			}
			a, err := splitAttr(piece, n, part.query)
			if err != nil {
				return nil, err
			}
			attrs = append(attrs, a)
		}
	}
	return attrs, nil
}

// splitAttr reads attribute number n, name=value.
func splitAttr(piece string, n int, query bool) (attr, error) {
	where := "attribute #" + strconv.Itoa(n)
	if piece == "" {
		return attr{}, &RefError{Reason: "has an empty " + where + " (two separators in a row, or one at the end)", Fix: "remove the extra ';' or '&'"}
	}
	if err := checkRaw(piece, where); err != nil {
		return attr{}, err
	}
	rawName, rawValue, ok := strings.Cut(piece, "=")
	if !ok {
		return attr{}, &RefError{Reason: "has " + where + " without \"=\"", Fix: "write each attribute as name=value"}
	}
	name, err1 := unescape(rawName)
	value, err2 := unescape(rawValue)
	if err1 != nil || err2 != nil {
		return attr{}, &RefError{Reason: "has a malformed %-escape in " + where, Fix: "write a byte as % and two hex digits, e.g. %20 for a space"}
	}
	return attr{name: name, value: value, raw: piece, query: query}, nil
}

// checkRaw refuses characters a URI holds only %-encoded: spaces and
// control characters, "#" (a fragment to URI parsers) and "+" (a space
// to some of them).
func checkRaw(piece, where string) error {
	for i := 0; i < len(piece); i++ {
		switch c := piece[i]; {
		case c <= ' ' || c == 0x7f:
			return &RefError{Reason: "has a space or control character in " + where, Fix: "write it %-encoded, e.g. %20 for a space"}
		case c == '#' || c == '+':
			return &RefError{Reason: fmt.Sprintf("has a raw %q in %s", c, where), Fix: fmt.Sprintf("write it %%-encoded: %%%02X", c)}
		}
	}
	return nil
}

// unescape decodes %XX escapes; a "%" not followed by two hex digits is
// an error.
func unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", fmt.Errorf("malformed escape at byte %d", i)
		}
		b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
		i += 2
	}
	return string(b), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// readable lists attribute names for a message, the secret ones left out.
func readable(names []string) []string {
	var out []string
	for _, n := range names {
		if !secretAttrs[n] {
			out = append(out, n)
		}
	}
	return out
}
