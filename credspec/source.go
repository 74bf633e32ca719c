package credspec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ksa-go/ksa"
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
// fails (matching [ErrInvalidObject]) on an invalid or duplicate name, an
// object without credspec, or contents over [MaxSize] once rendered.
func NewStaticSource(objects ...*GMSACredentialSpec) (*StaticSource, error) {
	m := make(map[string]string, len(objects))
	for _, o := range objects {
		if o == nil {
			return nil, fmt.Errorf("%w: nil object", ErrInvalidObject)
		}
		if o.CredSpec == nil {
			return nil, fmt.Errorf("%w: %q has no %s", ErrInvalidObject, o.Name, ContentsField)
		}
		if _, dup := m[o.Name]; dup {
			return nil, fmt.Errorf("%w: duplicate name %q", ErrInvalidObject, o.Name)
		}
		b, err := json.Marshal(o.CredSpec)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrInvalidObject, o.Name, err)
		}
		m[o.Name] = string(b)
	}
	return NewStaticSourceJSON(m)
}

// NewStaticSourceJSON builds a source from credential-spec JSON texts keyed
// by object name. Each must be a JSON object of at most [MaxSize] bytes in
// [Canonical] form; names must be valid object names.
func NewStaticSourceJSON(contents map[string]string) (*StaticSource, error) {
	m := make(map[string]string, len(contents))
	for name, text := range contents {
		if !ksa.IsObjectName(name) {
			return nil, fmt.Errorf("%w: name %q is not a DNS-1123 subdomain", ErrInvalidObject, name)
		}
		c, err := Canonical(text)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrInvalidObject, name, err)
		}
		if c == "null" {
			return nil, fmt.Errorf("%w: %q has no %s", ErrInvalidObject, name, ContentsField)
		}
		m[name] = c
	}
	return &StaticSource{contents: m}, nil
}

// Contents returns the canonical contents, or a *[NotFoundError].
func (s *StaticSource) Contents(_ context.Context, name string) (string, error) {
	c, ok := s.contents[name]
	if !ok {
		return "", &NotFoundError{Name: name}
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
