package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// scheduledStep is a stage change of a scheduled rotation.
type scheduledStep struct {
	At     time.Time `json:"at"`
	Action string    `json:"action"`
}

// stageTimes are the earliest times of a rotation's stage changes.
type stageTimes struct {
	// delay is --publish-delay: a key made the signing key signs that long
	// after the run.
	every, propagation, delay, retireWait time.Duration
}

// planSteady plans a rotation from the steady stage: the key signing since
// primary is followed after --every.
func (t stageTimes) planSteady(now, primary time.Time, signing string) []scheduledStep {
	next := later(primary.Add(t.every), now)
	sign := next.Add(t.propagation)
	return []scheduledStep{
		{next, "create the next key and publish it beside kid " + signing},
		{sign, "the next key signs (kid " + signing + " stays published)"},
		{sign.Add(t.delay + t.retireWait), "retire kid " + signing + ": every token it signed has expired"},
	}
}

// planNextPublished plans a rotation whose next key is published; sign is
// when a run makes it sign, delay how long after that it signs.
func (t stageTimes) planNextPublished(sign time.Time, delay time.Duration, signing, next string) []scheduledStep {
	return []scheduledStep{
		{sign, next + " signs (kid " + signing + " stays published)"},
		{sign.Add(delay + t.retireWait), "retire kid " + signing + ": every token it signed has expired"},
		{sign.Add(delay + t.every), "create the key after " + next + " and publish it"},
	}
}

// planNextSigns plans a rotation whose next key signs since primary;
// retire is when the old keys may be retired.
func (t stageTimes) planNextSigns(retire, primary time.Time, signing string, old []string) []scheduledStep {
	return []scheduledStep{
		{retire, "retire kid " + strings.Join(old, ", kid ") + ": every token signed before kid " + signing + " signs has expired"},
		{later(primary.Add(t.every), retire), "create the key after kid " + signing + " and publish it"},
	}
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// span writes a duration of a plan: "90d", "1h2m1s".
func span(d time.Duration) string { return secs(int64(d / time.Second)) }

// without returns the elements of a that b lacks.
func without(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// stamp formats a time of a plan.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// printScheduled writes a run of a scheduled rotation as text. The kids
// come from the ring file's keys and the store: printed terminal-safe.
func printScheduled(w io.Writer, res *scheduledRotation, to string) {
	fmt.Fprintf(w, "stage: %s: kid %s signs", res.Stage, termSafe(res.Signing))
	if res.Next != "" {
		fmt.Fprintf(w, "; kid %s is the next key", termSafe(res.Next))
	}
	if len(res.Old) > 0 {
		fmt.Fprintf(w, "; kid %s signed before it", termSafeAll(res.Old, ", kid "))
	}
	if len(res.Store) == 0 {
		fmt.Fprintf(w, "\n%s publishes no key\n", termSafe(to))
	} else {
		fmt.Fprintf(w, "\n%s publishes kid %s\n", termSafe(to), termSafeAll(res.Store, ", kid "))
	}
	verb := "done"
	if res.DryRun {
		verb = "would do (dry run)"
	}
	for _, c := range res.Changes {
		fmt.Fprintf(w, "%s: %s\n", verb, termSafe(c))
	}
	for _, kid := range res.Withdrawn {
		fmt.Fprintf(w, "withdrawn as planned: kid %s is no longer published\n", termSafe(kid))
	}
	if res.Waiting != "" {
		fmt.Fprintf(w, "nothing to do: waiting %s\n", termSafe(res.Waiting))
	}
	fmt.Fprintln(w, "plan:")
	for _, s := range res.Plan {
		fmt.Fprintf(w, "  %s (%s): %s\n", stamp(s.At), relTime(s.At, res.Now), termSafe(s.Action))
	}
}
