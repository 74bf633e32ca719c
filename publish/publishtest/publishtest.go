// Package publishtest holds in-memory stores for tests of code that
// publishes an issuer or rotates its keys: a [Store] of objects (a
// bucket) and a [Ring] (a ring file in a Secret or ConfigMap), both with
// the conditional writes of the real ones, and a hook to play another
// writer.
package publishtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/publish"
)

// Store is an in-memory publish.Store: a bucket whose objects have a
// version that changes with every write. Safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	loc     publish.Location
	objects map[string]publish.Object
	gen     map[string]int
	n       int
	// BeforeWrite, when set, is called before each write (outside the
	// store's lock): a test writes there as another writer would.
	BeforeWrite func(name string)
}

// NewStore returns an empty store at a location of kind publish.S3,
// s3://bucket/PREFIX.
func NewStore(prefix string) *Store {
	loc, err := publish.ParseLocation("s3://bucket/" + prefix)
	if err != nil {
		loc, _ = publish.ParseLocation("s3://bucket")
	}
	return &Store{loc: loc, objects: map[string]publish.Object{}, gen: map[string]int{}}
}

// Location returns the store's location.
func (s *Store) Location() publish.Location { return s.loc }

// PublicURL returns "": the store is served nowhere.
func (s *Store) PublicURL() string { return "" }

// Preflight finds nothing to refuse.
func (s *Store) Preflight(context.Context) (publish.Preflight, error) {
	return publish.Preflight{Access: publish.AccessUnknown}, nil
}

// Get returns a copy of the object and its version.
func (s *Store) Get(_ context.Context, name string, max int64) ([]byte, publish.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[name]
	if !ok {
		return nil, "", &publish.Error{Kind: publish.ErrNotFound, What: s.loc.URL(name) + ": not found"}
	}
	if int64(len(o.Data)) > max {
		return nil, "", &publish.Error{Kind: publish.ErrStore, What: s.loc.URL(name) + " is over " + strconv.FormatInt(max, 10) + " bytes"}
	}
	return append([]byte(nil), o.Data...), s.version(name), nil
}

// Object returns the object of that name, and whether there is one.
func (s *Store) Object(name string) (publish.Object, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[name]
	return o, ok
}

// Put writes the object.
func (s *Store) Put(_ context.Context, o publish.Object) error {
	return s.put(o, nil)
}

// PutIf writes the object if the store holds version v of it.
func (s *Store) PutIf(_ context.Context, o publish.Object, v publish.Version) error {
	return s.put(o, &v)
}

func (s *Store) put(o publish.Object, v *publish.Version) error {
	if s.BeforeWrite != nil {
		s.BeforeWrite(o.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v != nil && s.version(o.Name) != *v {
		return &publish.Error{Kind: publish.ErrChanged, What: "writing " + s.loc.URL(o.Name) + ": it changed since it was read"}
	}
	o.Data = append([]byte(nil), o.Data...)
	s.n++
	s.objects[o.Name], s.gen[o.Name] = o, s.n
	return nil
}

// version is the object's version: "" when absent.
func (s *Store) version(name string) publish.Version {
	if _, ok := s.objects[name]; !ok {
		return ""
	}
	return publish.Version(strconv.Itoa(s.gen[name]))
}

// Ring is an in-memory publish.RingStore: a ring file whose version is
// the digest of its JSON. Safe for concurrent use.
type Ring struct {
	mu   sync.Mutex
	data []byte
	// BeforeWrite, when set, is called before each write (outside the
	// ring's lock): a test writes there as another writer would.
	BeforeWrite func()
}

// NewRing returns a ring holding f.
func NewRing(f *extsigner.RingFile) *Ring { return &Ring{data: f.AppendJSON(nil)} }

// Read parses the ring file held.
func (r *Ring) Read(context.Context) (*extsigner.RingFile, publish.Version, error) {
	r.mu.Lock()
	data := r.data
	r.mu.Unlock()
	f, err := extsigner.ParseRingFile(data)
	if err != nil {
		return nil, "", err
	}
	return f, digest(data), nil
}

// File returns the ring file held.
func (r *Ring) File() *extsigner.RingFile {
	f, _, _ := r.Read(context.Background())
	return f
}

// Set replaces the ring file, as another writer does.
func (r *Ring) Set(f *extsigner.RingFile) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.data = f.AppendJSON(nil)
}

// Write replaces the ring file if it is still version v.
func (r *Ring) Write(_ context.Context, f *extsigner.RingFile, v publish.Version) error {
	if r.BeforeWrite != nil {
		r.BeforeWrite()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if digest(r.data) != v {
		return &publish.Error{Kind: publish.ErrChanged, What: "the ring file changed since it was read"}
	}
	r.data = f.AppendJSON(nil)
	return nil
}

func digest(data []byte) publish.Version {
	sum := sha256.Sum256(data)
	return publish.Version(hex.EncodeToString(sum[:]))
}
