package issuercmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/rotation"
)

// scheduledStep is a stage change of a scheduled rotation.
type scheduledStep struct {
	At     time.Time `json:"at"`
	Action string    `json:"action"`
}

// planWords words the steps of a plan: the first is the step the stage
// waits for, the others follow it.
func planWords(plan []rotation.Step) []scheduledStep {
	var out []scheduledStep
	for i, st := range plan {
		name := func(id string) string {
			if id == "" {
				return "the next key"
			}
			return "kid " + id
		}
		var what string
		switch st.Kind {
		case rotation.PublishNext:
			what = "create the key after " + name(st.Signer) + " and publish it"
			if i == 0 {
				what = "create the next key and publish it beside kid " + st.Signer
			}
		case rotation.SignNext:
			next := ""
			if len(st.Keys) > 0 {
				next = st.Keys[0]
			}
			what = name(next) + " signs (kid " + st.Signer + " stays published)"
		case rotation.RetireOld:
			what = "retire kid " + strings.Join(st.Keys, ", kid ") + ": every token it signed has expired"
			if i == 0 {
				what = "retire kid " + strings.Join(st.Keys, ", kid ") + ": every token signed before kid " + st.Signer + " signs has expired"
			}
		}
		out = append(out, scheduledStep{At: st.At, Action: what})
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
