// Package errs holds the one error convention of the ksa module, so that
// every package formats its errors the same way:
//
//   - a package's sentinels read "<pkg>: <phrase>" (jwks.ErrNoKeys is
//     "jwks: no keys");
//   - a typed error prints "<pkg>: <what went wrong>", then ": " and its
//     cause, if any;
//   - the package prefix appears once, on the outermost error: a cause that
//     starts with a ksa package prefix is printed without it, so
//     "oidc: rendering the key set: key #0: unsupported key" rather than
//     "oidc: ...: jwks: key #0: jwks: unsupported key";
//   - causes are wrapped (Unwrap), never pasted as text.
//
// The helpers take the package's prefix as an argument; they hold no state.
package errs

import "strings"

// prefixes are the packages of the module whose messages start with
// "<name>: ". A cause starting with one of them loses it when printed
// inside another error.
var prefixes = [...]string{
	"ksa", "jwks", "tokens", "oidc", "oidctest", "x509sa", "credspec",
	"federation", "entratest", "kubeapi", "extsigner", "signertest", "podcert",
	"golangjwt", "jwxkeys", "ksaprom", "tokenreview",
}

// Trim returns msg without a leading "<pkg>: " of a ksa package.
func Trim(msg string) string {
	for _, p := range prefixes {
		if len(msg) > len(p)+2 && msg[len(p)] == ':' && msg[len(p)+1] == ' ' && msg[:len(p)] == p {
			return msg[len(p)+2:]
		}
	}
	return msg
}

// Text returns err's message without a leading ksa package prefix, for
// printing err as the cause inside another error. A nil err gives "".
func Text(err error) string {
	if err == nil {
		return ""
	}
	return Trim(err.Error())
}

// Msg formats "<prefix>: <msg>: <cause>", leaving out the parts that are
// empty and the cause's own ksa prefix. prefix is the package's name
// without the colon.
func Msg(prefix, msg string, cause error) string {
	var b strings.Builder
	b.Grow(len(prefix) + 2 + len(msg) + 64)
	if prefix != "" {
		b.WriteString(prefix)
		b.WriteString(": ")
	}
	b.WriteString(Trim(msg))
	if c := Text(cause); c != "" {
		if msg != "" {
			b.WriteString(": ")
		}
		b.WriteString(c)
	}
	return b.String()
}

// List is several errors reported as one, with a summary: "<prefix>:
// <summary>: <a>; <b>". Each error keeps matching with errors.Is and
// errors.As through Unwrap.
type List struct {
	Prefix  string
	Summary string
	Errs    []error
}

func (l *List) Error() string {
	var b strings.Builder
	if l.Prefix != "" {
		b.WriteString(l.Prefix)
		b.WriteString(": ")
	}
	b.WriteString(l.Summary)
	for i, err := range l.Errs {
		if i == 0 {
			if l.Prefix != "" || l.Summary != "" {
				b.WriteString(": ")
			}
		} else {
			b.WriteString("; ")
		}
		b.WriteString(Text(err))
	}
	return b.String()
}

// Unwrap returns the errors.
func (l *List) Unwrap() []error { return l.Errs }

// Join returns nil for no errors, the error itself for one, and a *List
// otherwise.
func Join(prefix, summary string, list []error) error {
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return &List{Prefix: prefix, Summary: summary, Errs: list}
}
