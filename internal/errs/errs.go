// Package errs holds the one error convention of the ksa module, so that
// every package formats its errors the same way:
//
//   - a package's sentinels read "<pkg>: <phrase>" (jwks.ErrNoKeys is
//     "jwks: no keys") and are made with [New];
//   - a typed error prints "<pkg>: <what went wrong>", then ": " and its
//     cause, if any ([Msg]);
//   - the package prefix appears once, on the outermost error: a cause
//     from this module is printed without its prefix, so
//     "oidc: rendering the key set: key #0: unsupported key" rather than
//     "oidc: ...: jwks: key #0: jwks: unsupported key";
//   - causes are wrapped (Unwrap), never pasted as text.
//
// A cause is recognized as the module's by its type, not by its text: a
// sentinel made by [New], an error made by [Wrap] or [Join], or a value of
// a type declared in one of the module's packages (whose message starts
// with a package name). Errors of other modules keep their text whole
// ("x509: certificate signed by unknown authority" stays as it is), and
// this package knows no other package's name. The helpers hold no state.
package errs

import (
	"reflect"
	"strings"
)

// sentinel is a sentinel error: "<prefix>: <phrase>".
type sentinel struct{ prefix, phrase string }

func (s *sentinel) Error() string { return s.prefix + ": " + s.phrase }

// New returns a sentinel error of the package named prefix, reading
// "<prefix>: <phrase>". Each call returns a distinct error.
func New(prefix, phrase string) error { return &sentinel{prefix: prefix, phrase: phrase} }

// wrapped is an error of a package: a kind (a sentinel) and a cause.
type wrapped struct {
	prefix, msg string
	kind, err   error
}

func (w *wrapped) Error() string { return Msg(w.prefix, w.text(), w.err) }

// text is the message without prefix or cause: msg, or else the kind's.
func (w *wrapped) text() string {
	if w.msg == "" && w.kind != nil {
		return Text(w.kind)
	}
	return w.msg
}

// Unwrap returns the kind and the cause, those that are set.
func (w *wrapped) Unwrap() []error {
	switch {
	case w.kind == nil && w.err == nil:
		return nil
	case w.kind == nil:
		return []error{w.err}
	case w.err == nil:
		return []error{w.kind}
	}
	return []error{w.kind, w.err}
}

// Wrap returns an error of the package named prefix, for a failure that
// needs no type of its own: it reads "<prefix>: <msg>: <cause>" (msg
// empty: the kind's phrase), matches kind (a sentinel, or nil) with
// errors.Is, and wraps cause (or nil).
func Wrap(prefix string, kind error, msg string, cause error) error {
	return &wrapped{prefix: prefix, msg: msg, kind: kind, err: cause}
}

// Text returns err's message without the prefix of the module package
// that made it, for printing err as the cause inside another error. A nil
// err gives "".
func Text(err error) string {
	switch e := err.(type) {
	case nil:
		return ""
	case *sentinel:
		return e.phrase
	case *wrapped:
		return Msg("", e.text(), e.err)
	case *List:
		return (&List{Summary: e.Summary, Errs: e.Errs}).Error()
	}
	msg := err.Error()
	if fromModule(err) {
		// The module's messages start with a package name and ": "
		// (a *ksa.ConfigError with the name of the package it reports on).
		if name, rest, ok := strings.Cut(msg, ": "); ok && isName(name) {
			return rest
		}
	}
	return msg
}

// isName reports whether s can be a package name: lower-case letters and
// digits.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// fromModule reports whether a package of this module declares err's
// type; another module's package, or the standard library, does not.
func fromModule(err error) bool {
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	path, root := t.PkgPath(), modulePath()
	return path == root || strings.HasPrefix(path, root+"/")
}

// modulePath returns the module's path, from this package's own path.
func modulePath() string {
	return strings.TrimSuffix(reflect.TypeFor[sentinel]().PkgPath(), "/internal/errs")
}

// Msg formats "<prefix>: <msg>: <cause>", leaving out the parts that are
// empty and the cause's own prefix when the cause is the module's. prefix
// is the package's name without the colon.
func Msg(prefix, msg string, cause error) string {
	var b strings.Builder
	b.Grow(len(prefix) + 2 + len(msg) + 64)
	if prefix != "" {
		b.WriteString(prefix)
		b.WriteString(": ")
	}
	b.WriteString(msg)
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
