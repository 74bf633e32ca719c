package rotation_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/rotation"
)

// bytesReader hands out the fuzzer's bytes, zeros once they run out.
type bytesReader []byte

func (b *bytesReader) next() int {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return int(v)
}

// minutes returns a duration of 0 to 255 minutes.
func (b *bytesReader) minutes() time.Duration { return time.Duration(b.next()) * time.Minute }

// fuzzCase builds a policy, keys, an instant, copies and a cadence from
// the fuzzer's bytes. The keys mostly follow each other (published, then
// signing, then retired after the next key's switch), so that most
// schedules pass New and the actions are reached; the deltas, some
// negative, break the rules now and then.
func fuzzCase(data []byte) (rotation.Policy, []rotation.Key, time.Time, [][]string, rotation.Cadence) {
	b := bytesReader(data)
	p := rotation.Policy{Propagation: b.minutes() + time.Minute, MaxLifetime: b.minutes()*4 + time.Minute, Skew: b.minutes() - 5*time.Minute}
	keys := make([]rotation.Key, b.next()%7)
	cursor := t0.Add(time.Duration(b.next()-128) * time.Hour)
	delta := func() time.Duration { return time.Duration(b.next()-16) * p.Propagation / 16 }
	flags := make([]int, len(keys))
	for i := range keys {
		flags[i] = b.next()
		fault := b.next() % 32 // a rule broken, one key in ten
		k := &keys[i]
		k.ID = "k" + strconv.Itoa(i)
		k.VerifyOnly = flags[i]&3 == 3
		k.Unlisted = (k.VerifyOnly && flags[i]&4 != 0) || fault == 1
		if fault == 0 {
			k.ID = "k0"
		}
		cursor = cursor.Add(delta())
		if flags[i]&12 != 12 {
			k.Published = cursor
		}
		if flags[i]&16 != 0 && (!k.VerifyOnly || fault == 2) {
			cursor = cursor.Add(p.Propagation + delta())
			k.Signs = cursor
		}
		if i == 0 && flags[i]&32 != 0 {
			k.Published, k.Signs = time.Time{}, start // from the start
		}
	}
	for i := range keys {
		k := &keys[i]
		if flags[i]&64 == 0 {
			continue
		}
		switch j := slices.IndexFunc(keys[i+1:], func(o rotation.Key) bool { return !o.Signs.IsZero() }); {
		case !k.Signs.IsZero() && j >= 0:
			k.Retired = keys[i+1+j].Signs.Add(p.RetireWait() + delta())
		case flags[i]&128 != 0:
			k.Retired = k.Published.Add(delta()) // before or after it is published
		case flags[i]&32 != 0:
		default:
			k.Retired = cursor.Add(time.Duration(b.next()) * time.Minute)
		}
	}
	now := cursor.Add(time.Duration(b.next()-128) * p.Propagation / 32)
	var copies [][]string
	for range b.next() % 3 {
		var c []string
		mask := b.next()
		for i := range keys {
			if mask&(1<<i) != 0 {
				c = append(c, keys[i].ID)
			}
		}
		if mask&0x80 != 0 {
			c = append(c, "stranger")
		}
		copies = append(copies, c)
	}
	c := rotation.Cadence{Delay: b.minutes() / 8, Propagation: b.minutes()}
	switch every := b.next(); {
	case every%8 != 0:
		c.Every = max(p.Propagation, c.Propagation) + c.Delay + p.RetireWait() + time.Duration(every/8)*time.Hour
	case every%16 == 8:
		c.Every = time.Minute // too short
	}
	return p, keys, now, copies, c
}

// FuzzSchedule: New never panics, and refuses with a typed error; an
// accepted schedule never has two signers at an instant, never lacks one
// after its first switch, never withdraws a key while its tokens may be
// live, and its State is constant between two changes; the next action,
// applied, yields a schedule New accepts and that may replace the first.
func FuzzSchedule(f *testing.F) {
	f.Add([]byte{60, 6, 5, 2, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{60, 6, 5, 3, 8, 0, 0, 0, 0, 0, 0, 0, 0x80, 5, 1, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x80, 1, 0, 0, 0, 0, 1, 0xff, 30, 2, 0})
	f.Add([]byte{1, 1, 0, 4, 8, 0, 0, 0, 0, 0x90, 1, 0, 0x70, 0, 0x80, 2, 0, 0, 0, 0x70, 3, 0, 0, 0, 0, 0, 0, 1, 3, 0x81, 4, 200, 10, 2, 0x90, 1, 2, 3, 0x7f})
	f.Add([]byte{10, 1, 1, 2, 8, 0x80, 1, 0, 0, 0x81, 1, 0, 0, 0x80, 5, 0x80, 9, 0, 0, 0x80, 7, 1, 3, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, keys, now, copies, c := fuzzCase(data)
		s, err := rotation.New(p, keys)
		if err != nil {
			var re *rotation.RuleError
			var ce *ksa.ConfigError
			require.True(t, errors.As(err, &re) || errors.As(err, &ce), "%T: %v", err, err)
			return
		}
		checkInvariants(t, s)

		a, err := s.Next(copies, now, c)
		if err != nil {
			var re *rotation.RuleError
			var ce *ksa.ConfigError
			require.True(t, errors.As(err, &re) || errors.As(err, &ce), "%T: %v", err, err)
			return
		}
		after, err := s.Apply(a, "fresh")
		if a.Kind == rotation.PublishNext && errors.Is(err, rotation.ErrTooManyKeys) {
			return
		}
		require.NoError(t, err, "%+v", a)
		checkInvariants(t, after)
		require.NoError(t, s.CheckReplace(after, now, nil), "%+v", a)
	})
}

// checkInvariants holds an accepted schedule to the rules at every instant
// that matters: each time it writes, a nanosecond either side.
func checkInvariants(t *testing.T, s *rotation.Schedule) {
	t.Helper()
	keys, wait := s.Keys(), s.Policy().RetireWait()
	var instants, switches []time.Time
	for _, k := range keys {
		for _, x := range []time.Time{k.Published, k.Signs, k.Retired} {
			if !x.IsZero() {
				instants = append(instants, x.Add(-time.Nanosecond), x, x.Add(time.Nanosecond))
			}
		}
		if !k.Signs.IsZero() {
			switches = append(switches, k.Signs)
		}
	}
	slices.SortFunc(instants, time.Time.Compare)
	slices.SortFunc(switches, time.Time.Compare)
	first := switches[0]
	var prevStamp time.Time
	for _, ti := range instants {
		st := s.At(ti)
		signing := 0
		for _, k := range st.Keys {
			if k.Role == rotation.RoleSigning {
				signing++
				require.Equal(t, st.Signer, k.ID)
			}
		}
		require.LessOrEqual(t, signing, 1, "two signers at %s", ti)
		if !ti.Before(first) {
			require.Equal(t, 1, signing, "no signer at %s", ti)
		}
		require.False(t, st.DataTimestamp.After(ti) && ti.After(time.Unix(0, 0)), "data timestamp ahead of the instant")
		require.False(t, st.DataTimestamp.Before(prevStamp), "data timestamp moved back")
		prevStamp = st.DataTimestamp
		if !st.Next.IsZero() {
			require.True(t, st.Next.After(ti))
			require.Equal(t, st.Keys, s.At(st.Next.Add(-time.Nanosecond)).Keys, "a change before Next")
		}
		// Every key that signed within the retirement wait is published.
		for _, k := range keys {
			if k.Signs.IsZero() || k.Signs.After(ti) {
				continue
			}
			stopped := time.Time{}
			if n := slices.IndexFunc(switches, k.Signs.Before); n >= 0 {
				stopped = switches[n]
			}
			if stopped.IsZero() || ti.Before(stopped.Add(wait)) {
				require.True(t, slices.ContainsFunc(st.Keys, func(o rotation.KeyState) bool { return o.ID == k.ID }),
					"%s withdrawn at %s while its tokens may be live", k.ID, ti)
			}
		}
	}
}
