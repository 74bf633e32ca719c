package jwks

import (
	"context"
	"slices"
)

// KeySource supplies verification keys. It is the one seam between token
// validation and where keys come from: a fixed list ([StaticSource]), a PEM
// file, or a remote JWKS fetched over HTTP.
//
// Keys returns the keys that may verify a token whose header carries kid.
// For a non-empty kid only keys with exactly that ID are returned: there is
// no fallback to other keys, as in Kubernetes. An empty kid asks for every
// key. An unknown kid yields no keys and no error; an error means the source
// itself failed (a remote set that could not be fetched) or could not look
// for the kid (a remote set whose fetches are rate-limited: a
// *[RateLimitError]). Callers MUST NOT modify the returned slice.
type KeySource interface {
	Keys(ctx context.Context, kid string) ([]Key, error)
}

// StaticSource is a KeySource over a fixed list of keys. It is safe for
// concurrent use.
type StaticSource struct {
	all  []Key
	byID map[string][]Key
}

// NewStaticSource builds a source from keys made by [NewKey] (or by hand:
// each is checked with [Key.Check]). Keys are kept in the order given,
// duplicates included, as Kubernetes' StaticPublicKeysGetter keeps them.
// The error names the first key that fails and matches
// [ErrUnsupportedKey].
//
//	key, err := jwks.NewKey(publicKey)
//	src, err := jwks.NewStaticSource(key)
func NewStaticSource(keys ...Key) (*StaticSource, error) {
	list, err := checkKeys(keys)
	if err != nil {
		return nil, err
	}
	return newStaticSource(list), nil
}

// newStaticSource indexes checked keys.
func newStaticSource(list []Key) *StaticSource {
	s := &StaticSource{all: slices.Clip(list), byID: make(map[string][]Key, len(list))}
	for _, k := range list {
		s.byID[k.KeyID] = append(s.byID[k.KeyID], k)
	}
	// Full slices: a caller appending to a result gets a copy rather than
	// writing into storage other callers read.
	for id, ks := range s.byID {
		s.byID[id] = slices.Clip(ks)
	}
	return s
}

// Keys implements [KeySource]. It never fails.
func (s *StaticSource) Keys(_ context.Context, kid string) ([]Key, error) {
	if kid == "" {
		return s.all, nil
	}
	return s.byID[kid], nil
}

// All returns every key in order. Callers MUST NOT modify the slice.
func (s *StaticSource) All() []Key { return s.all }
