package apisnap

import (
	"go/constant"
	"go/types"
	"slices"
	"strings"
	"time"
)

// Lines returns the exported API of pkg, one line per declaration as the
// package documentation describes, sorted.
func Lines(pkg *types.Package) []string {
	w := writer{pkg: pkg}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if obj := scope.Lookup(name); obj.Exported() {
			w.object(obj)
		}
	}
	slices.Sort(w.lines)
	return slices.Compact(w.lines)
}

type writer struct {
	pkg   *types.Package
	lines []string
}

func (w *writer) add(parts ...string) {
	w.lines = append(w.lines, strings.Join(parts, ""))
}

// qualify writes the package's own names bare and others' with their
// import path.
func (w *writer) qualify(p *types.Package) string {
	if p == w.pkg {
		return ""
	}
	return p.Path()
}

func (w *writer) typ(t types.Type) string {
	return types.TypeString(t, w.qualify)
}

func (w *writer) object(obj types.Object) {
	switch o := obj.(type) {
	case *types.Const:
		w.add("const ", o.Name(), " ", w.typ(o.Type()), " = ", o.Val().ExactString(), durationNote(o))
	case *types.Var:
		w.add("var ", o.Name(), " ", w.typ(o.Type()))
	case *types.Func:
		w.add("func ", o.Name(), w.signature(o.Signature()))
	case *types.TypeName:
		w.typeName(o)
	}
}

func (w *writer) typeName(o *types.TypeName) {
	if o.IsAlias() {
		w.add("type ", o.Name(), w.typeParams(aliasParams(o)), " = ", w.typ(types.Unalias(o.Type())))
		return
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		return
	}
	head := "type " + o.Name() + w.typeParams(named.TypeParams())
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.add(head, " struct")
		for i := range u.NumFields() {
			f := u.Field(i)
			switch {
			case f.Embedded():
				w.add(head, " struct, embedded ", w.typ(f.Type()))
			case f.Exported():
				w.add(head, " struct, ", f.Name(), " ", w.typ(f.Type()))
			}
		}
	case *types.Interface:
		if !u.IsMethodSet() {
			w.add(head, " ", w.typ(u))
			return
		}
		var names []string
		for i := range u.NumMethods() {
			m := u.Method(i)
			names = append(names, m.Name())
			w.add(head, " interface, ", m.Name(), w.signature(m.Signature()))
		}
		if len(names) == 0 {
			w.add(head, " interface {}")
		} else {
			w.add(head, " interface { ", strings.Join(names, ", "), " }")
		}
		return
	default:
		w.add(head, " ", w.typ(u))
	}
	w.methods(o, named)
}

// methods writes the exported methods of *T's method set, promoted ones
// included, each with the receiver that has it: T when a value's method
// set holds it, else *T.
func (w *writer) methods(o *types.TypeName, named *types.Named) {
	recv := o.Name()
	if tp := named.TypeParams(); tp.Len() > 0 {
		names := make([]string, tp.Len())
		for i := range tp.Len() {
			names[i] = tp.At(i).Obj().Name()
		}
		recv += "[" + strings.Join(names, ", ") + "]"
	}
	values := types.NewMethodSet(named)
	pointers := types.NewMethodSet(types.NewPointer(named))
	for i := range pointers.Len() {
		sel := pointers.At(i)
		m := sel.Obj().(*types.Func)
		if !m.Exported() {
			continue
		}
		r := "*" + recv
		if values.Lookup(m.Pkg(), m.Name()) != nil {
			r = recv
		}
		w.add("method (", r, ") ", m.Name(), w.signature(sel.Type().(*types.Signature)))
	}
}

// signature writes a function's type parameters, parameter types and
// result types, without names.
func (w *writer) signature(sig *types.Signature) string {
	var b strings.Builder
	b.WriteString(w.typeParams(sig.TypeParams()))
	b.WriteByte('(')
	params := sig.Params()
	for i := range params.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			b.WriteString("...")
			t = t.(*types.Slice).Elem()
		}
		b.WriteString(w.typ(t))
	}
	b.WriteByte(')')
	results := sig.Results()
	switch results.Len() {
	case 0:
	case 1:
		b.WriteString(" " + w.typ(results.At(0).Type()))
	default:
		b.WriteString(" (")
		for i := range results.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(w.typ(results.At(i).Type()))
		}
		b.WriteByte(')')
	}
	return b.String()
}

func (w *writer) typeParams(tp *types.TypeParamList) string {
	if tp.Len() == 0 {
		return ""
	}
	parts := make([]string, tp.Len())
	for i := range tp.Len() {
		p := tp.At(i)
		parts[i] = p.Obj().Name() + " " + w.typ(p.Constraint())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// durationNote writes a time.Duration constant's value as time prints it
// too: " (24h0m0s)".
func durationNote(c *types.Const) string {
	n, ok := c.Type().(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != "time" || n.Obj().Name() != "Duration" {
		return ""
	}
	v, exact := constant.Int64Val(c.Val())
	if !exact {
		return ""
	}
	return " (" + time.Duration(v).String() + ")"
}

func aliasParams(o *types.TypeName) *types.TypeParamList {
	if a, ok := o.Type().(*types.Alias); ok {
		return a.TypeParams()
	}
	return nil
}
