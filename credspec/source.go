package credspec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

// Source looks GMSACredentialSpec objects up by name. It is the only way the
// [Expander] and the [Validator] read them, so a live client, an informer
// cache or a static set can back it.
type Source interface {
	// Contents returns the JSON text of the credspec field of the
	// cluster-scoped GMSACredentialSpec named name, in any formatting (it
	// is re-rendered with [Canonical]). For a missing object it MUST return
	// an error matching [ErrNotFound] or a Kubernetes NotFound error
	// (apierrors.IsNotFound); for an object without credspec, "" or null.
	// Any other error is a lookup failure.
	Contents(ctx context.Context, name string) (string, error)
}

// SourceFunc adapts a function to [Source].
type SourceFunc func(ctx context.Context, name string) (string, error)

// Contents calls f.
func (f SourceFunc) Contents(ctx context.Context, name string) (string, error) { return f(ctx, name) }

// StaticSource is an immutable in-memory [Source], safe for concurrent use.
// Its contents are stored in [Canonical] form.
type StaticSource struct {
	contents map[string]string
}

// NewStaticSource builds a source from objects, keyed by their names. It
// fails (matching [ErrInvalidSpec]) on an invalid or duplicate name, an
// object without credspec, or contents over [MaxSize] once rendered.
func NewStaticSource(objects ...*GMSACredentialSpec) (*StaticSource, error) {
	m := make(map[string]string, len(objects))
	for _, o := range objects {
		if o == nil {
			return nil, invalid("nil object", nil)
		}
		if o.CredSpec == nil {
			return nil, invalid(fmt.Sprintf("object %q has no %s", o.Name, ContentsField), nil)
		}
		if _, dup := m[o.Name]; dup {
			return nil, invalid(fmt.Sprintf("duplicate object name %q", o.Name), nil)
		}
		b, err := json.Marshal(o.CredSpec)
		if err != nil {
			return nil, invalid("object "+strconv.Quote(o.Name), err)
		}
		m[o.Name] = string(b)
	}
	return NewStaticSourceJSON(m)
}

// NewStaticSourceJSON builds a source from credential-spec JSON texts keyed
// by object name. Each must be a JSON object of at most [MaxSize] bytes in
// [Canonical] form; names must be valid object names. Errors match
// [ErrInvalidSpec].
func NewStaticSourceJSON(contents map[string]string) (*StaticSource, error) {
	m := make(map[string]string, len(contents))
	for name, text := range contents {
		if !ksa.IsObjectName(name) {
			return nil, invalidName(name)
		}
		c, err := Canonical(text)
		if err != nil {
			return nil, invalid("object "+strconv.Quote(name), err)
		}
		if c == "null" {
			return nil, invalid(fmt.Sprintf("object %q has no %s", name, ContentsField), nil)
		}
		m[name] = c
	}
	return &StaticSource{contents: m}, nil
}

// Contents returns the canonical contents, or an error naming the object
// that matches [ErrNotFound].
func (s *StaticSource) Contents(_ context.Context, name string) (string, error) {
	c, ok := s.contents[name]
	if !ok {
		return "", errs.Wrap(prefix, ErrNotFound, fmt.Sprintf("GMSACredentialSpec %q not found", name), nil)
	}
	return c, nil
}

// Names returns the object names, sorted.
func (s *StaticSource) Names() []string { return names(s.contents) }

// canonical marks the contents as already canonical.
func (s *StaticSource) canonical() {}

// canonicalSource is implemented by sources whose contents need no
// re-rendering.
type canonicalSource interface{ canonical() }

func names(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// isNotFound reports whether a Source error means the object is missing.
func isNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || apierrors.IsNotFound(err)
}
