package rotation

import (
	"strconv"
	"time"
)

// Role is what a published key does at an instant.
type Role uint8

// The roles of a key, in the order a rotation moves a key through them.
const (
	// RoleStaged: published, not signing yet (or never: no Signs time).
	RoleStaged Role = iota + 1
	// RoleSigning: the one key that signs.
	RoleSigning
	// RolePrevious: signed before the signing key; published until its
	// retirement.
	RolePrevious
	// RoleVerifyOnly: a verify-only key.
	RoleVerifyOnly
)

// String returns "staged", "signing", "previous" or "verify-only".
func (r Role) String() string {
	return name(int(r), "Role", "staged", "signing", "previous", "verify-only")
}

// name returns the name of an enumeration's value v, from 1, or
// "<typ>(v)" for a value out of range.
func name(v int, typ string, names ...string) string {
	if v >= 1 && v <= len(names) {
		return names[v-1]
	}
	return typ + "(" + strconv.Itoa(v) + ")"
}

// State is a schedule at an instant: what is published and who signs.
// Replicas given the same schedule compute the same State at the same
// instant.
type State struct {
	// Keys are the keys published at the instant (Published at or before
	// it, Retired after it), in the schedule's order.
	Keys []KeyState
	// Signer is the ID of the signing key: the key whose Signs is the
	// latest at or before the instant; empty before the first.
	Signer string
	// DataTimestamp is when the published set last changed: the latest
	// Published or Retired time at or before the instant, time.Unix(0, 0)
	// (UTC) before any.
	DataTimestamp time.Time
	// Changed is the latest time of the schedule at or before the
	// instant (a publication, a switch or a retirement); zero before any.
	Changed time.Time
	// Next is the earliest time of the schedule after the instant, when
	// the State next changes; zero when it never does.
	Next time.Time
}

// KeyState is a published key and its role at an instant.
type KeyState struct {
	Key
	// Index is the key's position in the schedule.
	Index int
	// Role is what the key does.
	Role Role
	// Since is when it took that role: its Signs time when signing, the
	// next key's Signs time when previous, its Published time otherwise
	// (zero: from the start).
	Since time.Time
}

// Listed returns the IDs of the published keys that every copy must
// hold: all but the unlisted ones, in order.
func (st State) Listed() []string {
	var ids []string
	for _, k := range st.Keys {
		if !k.Unlisted {
			ids = append(ids, k.ID)
		}
	}
	return ids
}

// At returns the schedule's state at t.
func (s *Schedule) At(t time.Time) State {
	st := State{DataTimestamp: time.Unix(0, 0).UTC()}
	signer := -1 // the index of the signing key
	for _, i := range s.signers {
		if s.keys[i].Signs.After(t) {
			break
		}
		signer = i
	}
	if signer >= 0 {
		st.Signer = s.keys[signer].ID
	}
	for i, k := range s.keys {
		for _, x := range []time.Time{k.Published, k.Signs, k.Retired} {
			switch {
			case x.IsZero():
			case x.After(t):
				if st.Next.IsZero() || x.Before(st.Next) {
					st.Next = x
				}
			case x.After(st.Changed):
				st.Changed = x
			}
		}
		for _, x := range []time.Time{k.Published, k.Retired} {
			if !x.IsZero() && !x.After(t) && x.After(st.DataTimestamp) {
				st.DataTimestamp = x
			}
		}
		if k.Published.After(t) || (!k.Retired.IsZero() && !k.Retired.After(t)) {
			continue
		}
		ks := KeyState{Key: k, Index: i, Role: RoleStaged, Since: k.Published}
		switch {
		case k.VerifyOnly:
			ks.Role = RoleVerifyOnly
		case i == signer:
			ks.Role, ks.Since = RoleSigning, k.Signs
		case !k.Signs.IsZero() && !k.Signs.After(t):
			ks.Role, ks.Since = RolePrevious, s.successor(i)
		}
		st.Keys = append(st.Keys, ks)
	}
	return st
}

// successor returns when the key after signer i took over; zero for the
// last.
func (s *Schedule) successor(i int) time.Time {
	for n, j := range s.signers {
		if j == i && n+1 < len(s.signers) {
			return s.keys[s.signers[n+1]].Signs
		}
	}
	return time.Time{}
}
