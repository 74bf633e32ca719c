package registrytoken

import (
	"fmt"
	"slices"
	"strings"
)

// Limits of a scope, as the registry's reference grammar bounds them.
const (
	// MaxNameBytes bounds a repository name (the distribution reference
	// grammar's limit).
	MaxNameBytes = 255
	// MaxActions bounds the actions of one scope.
	MaxActions = 8
)

// Scope is one resource a client asks access to: the "scope" parameter of a
// token request, "repository:team/app:pull,push".
type Scope struct {
	// Type is the resource type: "repository", "registry"...
	Type string
	// Class is the optional resource class written in parentheses after the
	// type ("repository(plugin)"); empty when absent.
	Class string
	// Name is the resource name: a repository path for "repository".
	Name string
	// Actions are the actions asked for, without duplicates, in the order
	// given.
	Actions []string
}

// String writes s back in the scope syntax.
func (s Scope) String() string {
	typ := s.Type
	if s.Class != "" {
		typ += "(" + s.Class + ")"
	}
	return typ + ":" + s.Name + ":" + strings.Join(s.Actions, ",")
}

// ParseScope parses one scope, "type[(class)]:name:action[,action...]". The
// type and class are lowercase letters and digits; the name ends at the last
// colon (a registry catalog's "registry:catalog:*" parses too) and, for type
// "repository", must be a repository path of the distribution reference
// grammar (lowercase components joined by '/', separators '.', '_', "__" and
// runs of '-', at most MaxNameBytes); actions are lowercase letters or "*",
// at most MaxActions. Anything else is refused with ErrBadRequest.
func ParseScope(s string) (Scope, error) {
	typ, rest, ok := strings.Cut(s, ":")
	i := strings.LastIndexByte(rest, ':')
	if !ok || i < 0 {
		return Scope{}, badScope("want type:name:actions")
	}
	name, acts := rest[:i], rest[i+1:]
	var sc Scope
	if open := strings.IndexByte(typ, '('); open >= 0 {
		if !strings.HasSuffix(typ, ")") {
			return Scope{}, badScope("unbalanced class parentheses")
		}
		sc.Class = typ[open+1 : len(typ)-1]
		typ = typ[:open]
		if !isLowerAlnum(sc.Class) {
			return Scope{}, badScope("the class is not lowercase letters and digits")
		}
	}
	if !isLowerAlnum(typ) {
		return Scope{}, badScope("the type is not lowercase letters and digits")
	}
	sc.Type = typ
	if name == "" || len(name) > MaxNameBytes {
		return Scope{}, badScope(fmt.Sprintf("the name is empty or over %d bytes", MaxNameBytes))
	}
	if typ == "repository" && !isRepository(name) {
		return Scope{}, badScope("the name is not a repository path")
	}
	if typ != "repository" && !isLowerAlnum(name) {
		return Scope{}, badScope("the name is not lowercase letters and digits")
	}
	sc.Name = name
	for a := range strings.SplitSeq(acts, ",") {
		if a != "*" && !isLower(a) {
			return Scope{}, badScope("an action is not lowercase letters or *")
		}
		if slices.Contains(sc.Actions, a) {
			continue
		}
		if len(sc.Actions) == MaxActions {
			return Scope{}, badScope(fmt.Sprintf("over %d actions", MaxActions))
		}
		sc.Actions = append(sc.Actions, a)
	}
	return sc, nil
}

func badScope(why string) error {
	return wrap(ErrBadRequest, "malformed scope: "+why, nil)
}

func isLower(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

func isLowerAlnum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// isRepository reports whether name is a path of the reference grammar:
// components [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )* joined
// by "/".
func isRepository(name string) bool {
	for comp := range strings.SplitSeq(name, "/") {
		if !isComponent(comp) {
			return false
		}
	}
	return true
}

func isComponent(c string) bool {
	i := 0
	for {
		start := i
		for i < len(c) && isAlnum(c[i]) {
			i++
		}
		if i == start {
			return false
		}
		if i == len(c) {
			return true
		}
		switch {
		case c[i] == '.':
			i++
		case c[i] == '_':
			i++
			if i < len(c) && c[i] == '_' {
				i++
			}
		case c[i] == '-':
			for i < len(c) && c[i] == '-' {
				i++
			}
		default:
			return false
		}
	}
}
