package issuercmd

import (
	"fmt"
	"io"
	"time"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/rotation"
)

// scheduledStep is a stage change of a scheduled rotation.
type scheduledStep struct {
	At     time.Time `json:"at"`
	Action string    `json:"action"`
}

// planWords words the steps of a plan (rotation.Describe).
func planWords(plan []rotation.Step) []scheduledStep {
	var out []scheduledStep
	for i, what := range rotation.Describe(plan) {
		out = append(out, scheduledStep{At: plan[i].At, Action: what})
	}
	return out
}

// span writes a duration of a plan: "90d", "1h2m1s".
func span(d time.Duration) string { return base.Secs(int64(d / time.Second)) }

// stamp formats a time of a plan.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// printScheduled writes a run of a scheduled rotation as text. The kids
// come from the ring file's keys and the store: printed terminal-safe.
func printScheduled(w io.Writer, res *scheduledRotation, to string) {
	fmt.Fprintf(w, "stage: %s: kid %s signs", res.Stage, base.TermSafe(res.Signing))
	if res.Next != "" {
		fmt.Fprintf(w, "; kid %s is the next key", base.TermSafe(res.Next))
	}
	if len(res.Old) > 0 {
		fmt.Fprintf(w, "; kid %s signed before it", base.TermSafeAll(res.Old, ", kid "))
	}
	if len(res.Store) == 0 {
		fmt.Fprintf(w, "\n%s publishes no key\n", base.TermSafe(to))
	} else {
		fmt.Fprintf(w, "\n%s publishes kid %s\n", base.TermSafe(to), base.TermSafeAll(res.Store, ", kid "))
	}
	verb := "done"
	if res.DryRun {
		verb = "would do (dry run)"
	}
	for _, c := range res.Changes {
		fmt.Fprintf(w, "%s: %s\n", verb, base.TermSafe(c))
	}
	for _, kid := range res.Withdrawn {
		fmt.Fprintf(w, "withdrawn as planned: kid %s is no longer published\n", base.TermSafe(kid))
	}
	if res.Waiting != "" {
		fmt.Fprintf(w, "nothing to do: waiting %s\n", base.TermSafe(res.Waiting))
	}
	fmt.Fprintln(w, "plan:")
	for _, s := range res.Plan {
		fmt.Fprintf(w, "  %s (%s): %s\n", stamp(s.At), base.RelTime(s.At, res.Now), base.TermSafe(s.Action))
	}
}
