package rotation_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/ksa-go/ksa/rotation"
)

// A rotation written in advance: "old" signs from the start; "new" is
// published on March 1 and signs an hour later; "old" is retired when the
// last token it signed has expired. At shows what is published and who
// signs at each instant.
func Example() {
	published := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	p := rotation.Policy{Propagation: time.Hour, MaxLifetime: 24 * time.Hour, Skew: 2 * time.Minute}
	s, err := rotation.New(p, []rotation.Key{
		{ID: "old", Signs: time.Unix(0, 0), Retired: published.Add(time.Hour + p.RetireWait())},
		{ID: "new", Published: published, Signs: published.Add(time.Hour)},
	})
	if err != nil {
		panic(err)
	}
	for _, t := range []time.Time{published.Add(-time.Minute), published, published.Add(time.Hour), published.Add(time.Hour + p.RetireWait())} {
		st := s.At(t)
		fmt.Printf("%s: %s signs;", t.Format(time.DateTime), st.Signer)
		for _, k := range st.Keys {
			fmt.Printf(" %s %s", k.ID, k.Role)
		}
		fmt.Println()
	}

	// Retiring "old" a minute sooner is refused.
	_, err = rotation.New(p, []rotation.Key{
		{ID: "old", Signs: time.Unix(0, 0), Retired: published.Add(time.Hour + p.RetireWait() - time.Minute)},
		{ID: "new", Published: published, Signs: published.Add(time.Hour)},
	})
	var re *rotation.RuleError
	if errors.As(err, &re) && errors.Is(err, rotation.ErrRetireEarly) {
		fmt.Println("refused:", re.KeyID, re.Field, "safe from", re.SafeAt.Format(time.DateTime))
	}
	// Output:
	// 2027-03-01 08:59:00: old signs; old signing
	// 2027-03-01 09:00:00: old signs; old signing new staged
	// 2027-03-01 10:00:00: new signs; old previous new signing
	// 2027-03-02 10:02:00: new signs; new signing
	// refused: old Retired safe from 2027-03-02 10:02:00
}

// A rotation run step by step, as a job run every few minutes does: each
// run asks Next what is due given what the store publishes, does it, and
// applies it to the schedule.
func ExampleSchedule_Next() {
	now := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	p := rotation.Policy{Propagation: time.Hour, MaxLifetime: time.Hour, Skew: 2 * time.Minute}
	c := rotation.Cadence{Every: 30 * 24 * time.Hour, Delay: time.Minute}
	s, err := rotation.New(p, []rotation.Key{{ID: "k1", Published: now.Add(-c.Every), Signs: now.Add(-c.Every)}})
	if err != nil {
		panic(err)
	}
	store := []string{"k1"} // the key set the store publishes
	for _, run := range []time.Duration{0, 30 * time.Minute, time.Hour, 2 * time.Hour, 2*time.Hour + 3*time.Minute} {
		t := now.Add(run)
		a, err := s.Next([][]string{store}, t, c)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s %s: %s", t.Format(time.TimeOnly), a.Stage, a.Kind)
		if a.Kind == rotation.Wait {
			fmt.Printf(" until %s (%s)", a.At.Format(time.TimeOnly), a.For)
		}
		fmt.Println()
		if s, err = s.Apply(a, "k2"); err != nil {
			panic(err)
		}
		store = s.At(t).Listed()
	}
	// Output:
	// 00:00:00 steady: publish-next
	// 00:30:00 next-published: wait until 01:00:00 (propagation)
	// 01:00:00 next-published: sign-next
	// 02:00:00 next-signs: wait until 02:03:00 (tokens)
	// 02:03:00 next-signs: retire-old
}

// A schedule reloaded by a running signer: the new schedule says the
// staged key was published yesterday, but the signer first served it ten
// minutes ago, so making it sign now is refused until the propagation
// time has passed since then.
func ExampleSchedule_CheckReplace() {
	now := time.Date(2027, 3, 1, 9, 10, 0, 0, time.UTC)
	p := rotation.Policy{Propagation: time.Hour, MaxLifetime: time.Hour, Skew: 2 * time.Minute}
	running, err := rotation.New(p, []rotation.Key{{ID: "a", Signs: time.Unix(0, 0)}, {ID: "b"}})
	if err != nil {
		panic(err)
	}
	reloaded, err := rotation.New(p, []rotation.Key{
		{ID: "a", Signs: time.Unix(0, 0), Retired: now.Add(p.RetireWait())},
		{ID: "b", Published: now.Add(-24 * time.Hour), Signs: now},
	})
	if err != nil {
		panic(err)
	}
	served := map[string]time.Time{"a": time.Unix(0, 0), "b": now.Add(-10 * time.Minute)}
	err = running.CheckReplace(reloaded, now, served)
	var re *rotation.RuleError
	if errors.As(err, &re) {
		fmt.Println(errors.Is(err, rotation.ErrStaging), re.KeyID, "may sign from", re.SafeAt.Format(time.TimeOnly))
	}
	// Output:
	// true b may sign from 10:00:00
}

// A CA rotation whose trust bundle was found without the next CA just
// before the switch: the next CA is published again and the switch, with
// the former CA's retirement, waits the propagation time. A switch
// recorded earlier never moves it back.
func ExampleSchedule_Postpone() {
	signsAt := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	p := rotation.Policy{Propagation: time.Hour, MaxLifetime: 24 * time.Hour, Skew: 5 * time.Minute}
	s, err := rotation.New(p, []rotation.Key{
		{ID: "ca1", Signs: time.Unix(0, 0), Retired: signsAt.Add(p.RetireWait())},
		{ID: "ca2", Signs: signsAt},
	})
	if err != nil {
		panic(err)
	}
	now := signsAt.Add(-10 * time.Minute)
	a, err := s.Next([][]string{{"ca1"}}, now, rotation.Cadence{})
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Kind, a.Missing, "restart:", a.Restart, "signs at", a.SignsAt.Format(time.TimeOnly))
	if s, err = s.Apply(a, ""); err != nil {
		panic(err)
	}
	if s, err = s.Postpone("ca2", signsAt); err != nil { // an older record
		panic(err)
	}
	keys := s.Keys()
	fmt.Println("ca2 published", keys[1].Published.Format(time.TimeOnly), "signs", keys[1].Signs.Format(time.TimeOnly))
	fmt.Println("ca1 retired", keys[0].Retired.Format(time.DateTime))
	// Output:
	// repair [ca2] restart: true signs at 12:50:00
	// ca2 published 11:50:00 signs 12:50:00
	// ca1 retired 2027-03-02 12:55:00
}
