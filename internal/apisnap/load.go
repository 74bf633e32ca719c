package apisnap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Platform is the GOOS and GOARCH the packages are type-checked for.
const (
	GOOS   = "linux"
	GOARCH = "amd64"
)

// Package is one package of the module, type-checked from its source.
type Package struct {
	// Path is the import path; Rel is the directory relative to the
	// module's root ("." for the root package).
	Path, Rel string
	Types     *types.Package
	// Deprecated are the identifiers whose doc comment says
	// "Deprecated:" ([Deprecations]).
	Deprecated map[string]string
}

// listed is what go list reports of a package.
type listed struct {
	ImportPath, Name, Dir, Export string
	GoFiles, CgoFiles             []string
	DepOnly, Standard             bool
	Module                        *struct{ Path, Dir string }
	Error                         *struct{ Err string }
}

// Load type-checks the library packages of the module whose root is dir:
// every package ./... matches but internal packages, commands (package
// main) and the packages of examples/ (an example program's own
// packages, no API of the library). Dependencies are read from the export data the go command builds
// (goTool is the go command); the packages themselves are parsed from
// source, so a test calling Load opens every file it reports on.
// buildFlags go to go list: a test built with -race passes -race, so that
// the export data is the one its own build left in the cache.
func Load(goTool, dir string, buildFlags ...string) ([]Package, error) {
	args := append([]string{"list", "-e", "-export", "-deps",
		"-json=ImportPath,Name,Dir,Export,GoFiles,CgoFiles,DepOnly,Standard,Module,Error"}, buildFlags...)
	cmd := exec.Command(goTool, append(args, "./...")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS="+GOOS, "GOARCH="+GOARCH)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apisnap: go list: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	exports := map[string]string{}
	var mine []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("apisnap: reading go list's output: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("apisnap: package %s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly && library(p) {
			mine = append(mine, p)
		}
	}
	if len(mine) == 0 {
		return nil, fmt.Errorf("apisnap: no library package under %s", dir)
	}
	root := mine[0].Module.Dir
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	conf := types.Config{Importer: imp, Sizes: types.SizesFor("gc", GOARCH)}
	pkgs := make([]Package, 0, len(mine))
	for _, p := range mine {
		if len(p.CgoFiles) > 0 {
			return nil, fmt.Errorf("apisnap: package %s uses cgo, which Load does not type-check", p.ImportPath)
		}
		files := make([]*ast.File, 0, len(p.GoFiles))
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution|parser.ParseComments)
			if err != nil {
				return nil, fmt.Errorf("apisnap: %w", err)
			}
			files = append(files, f)
		}
		tp, err := conf.Check(p.ImportPath, fset, files, nil)
		if err != nil {
			return nil, fmt.Errorf("apisnap: type-checking %s: %w", p.ImportPath, err)
		}
		rel, err := filepath.Rel(root, p.Dir)
		if err != nil {
			return nil, fmt.Errorf("apisnap: %w", err)
		}
		pkgs = append(pkgs, Package{Path: p.ImportPath, Rel: filepath.ToSlash(rel), Types: tp, Deprecated: Deprecations(files)})
	}
	slices.SortFunc(pkgs, func(a, b Package) int { return strings.Compare(a.Path, b.Path) })
	return pkgs, nil
}

// library reports whether p is one of the module's library packages: not
// a command, not internal, not under examples/.
func library(p listed) bool {
	if p.Standard || p.Module == nil || p.Name == "main" || strings.HasPrefix(p.ImportPath, p.Module.Path+"/examples/") {
		return false
	}
	for _, elem := range strings.Split(p.ImportPath, "/") {
		if elem == "internal" {
			return false
		}
	}
	return true
}

// File is the package's snapshot file, relative to the module's root:
// api/<directory>.txt, and for the module's root package api/<last
// element of the module path>.txt.
func (p Package) File() string {
	if p.Rel == "." {
		return "api/" + p.Path[strings.LastIndex(p.Path, "/")+1:] + ".txt"
	}
	return "api/" + p.Rel + ".txt"
}
