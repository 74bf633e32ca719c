package apisnap

import (
	"go/ast"
	"go/token"
	"regexp"
	"strings"
)

// Deprecations finds the exported identifiers of a package's files whose
// doc comment has a paragraph starting "Deprecated:", as Go's tools read
// it, and returns that paragraph by identifier: "Name", "Type.Member" (a
// method, a field or an interface's method) and "" for the package
// itself (its package comment). A grouped declaration without its own
// doc comment takes the group's.
func Deprecations(files []*ast.File) map[string]string {
	out := map[string]string{}
	add := func(key string, docs ...*ast.CommentGroup) {
		for _, doc := range docs {
			if doc == nil {
				continue
			}
			if p, ok := deprecation(doc.Text()); ok {
				out[key] = p
			}
			return
		}
	}
	for _, f := range files {
		add("", f.Doc)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil || len(d.Recv.List) == 0 {
					add(d.Name.Name, d.Doc)
				} else if recv := receiverName(d.Recv.List[0].Type); recv != "" {
					add(recv+"."+d.Name.Name, d.Doc)
				}
			case *ast.GenDecl:
				genDecl(d, add)
			}
		}
	}
	return out
}

func genDecl(d *ast.GenDecl, add func(string, ...*ast.CommentGroup)) {
	if d.Tok == token.IMPORT {
		return
	}
	for _, spec := range d.Specs {
		switch s := spec.(type) {
		case *ast.ValueSpec:
			for _, n := range s.Names {
				if n.IsExported() {
					add(n.Name, s.Doc, d.Doc)
				}
			}
		case *ast.TypeSpec:
			if !s.Name.IsExported() {
				continue
			}
			add(s.Name.Name, s.Doc, d.Doc)
			var fields *ast.FieldList
			switch t := s.Type.(type) {
			case *ast.StructType:
				fields = t.Fields
			case *ast.InterfaceType:
				fields = t.Methods
			}
			if fields == nil {
				continue
			}
			for _, f := range fields.List {
				for _, n := range fieldNames(f) {
					if ast.IsExported(n) {
						add(s.Name.Name+"."+n, f.Doc)
					}
				}
			}
		}
	}
}

// fieldNames are the names a field declares: its names, or an embedded
// field's type name.
func fieldNames(f *ast.Field) []string {
	if len(f.Names) > 0 {
		names := make([]string, len(f.Names))
		for i, n := range f.Names {
			names[i] = n.Name
		}
		return names
	}
	if n := receiverName(f.Type); n != "" {
		return []string{n}
	}
	return nil
}

// receiverName is the name of the type a receiver or an embedded field
// names, without pointer, package or type arguments.
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// deprecation returns the paragraph of doc that starts "Deprecated:",
// its lines joined by spaces.
func deprecation(doc string) (string, bool) {
	for _, p := range strings.Split(doc, "\n\n") {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, "Deprecated:") {
			return strings.Join(strings.Fields(p), " "), true
		}
	}
	return "", false
}

// docLink matches a Go doc link: [Name], [Name.Member], [pkg.Name],
// [importpath.Name.Member], with an optional *.
var docLink = regexp.MustCompile(`\[\*?((?:[\w.~-]+/)*[\w.~-]+)\]`)

// docLinks returns the doc links of a doc comment's paragraph (what is
// between the brackets, without a *): the names that read as Go names.
func docLinks(paragraph string) []string {
	var out []string
	for _, m := range docLink.FindAllStringSubmatchIndex(paragraph, -1) {
		if strings.HasPrefix(paragraph[m[1]:], "(") || strings.HasPrefix(paragraph[m[1]:], ":") {
			continue // a Markdown link or a link definition
		}
		link := paragraph[m[2]:m[3]]
		if _, ok := parseName(link); ok || isExported(link) || isMemberLink(link) {
			out = append(out, link)
		}
	}
	return out
}

// isMemberLink reports whether link is Type.Member, both exported.
func isMemberLink(link string) bool {
	t, m, ok := strings.Cut(link, ".")
	return ok && isExported(t) && isExported(m)
}
