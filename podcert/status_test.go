package podcert_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/podcert"
)

func TestStatusOutcome(t *testing.T) {
	cond := func(typ, status string) podcert.Condition {
		return podcert.Condition{Type: typ, Status: status, Reason: "R"}
	}
	for _, tc := range []struct {
		name       string
		conditions []podcert.Condition
		want       podcert.Outcome
	}{
		{name: "no conditions: not decided"},
		{name: "Issued", conditions: []podcert.Condition{cond(podcert.ConditionIssued, podcert.ConditionTrue)}, want: podcert.Issued},
		{name: "Denied", conditions: []podcert.Condition{cond(podcert.ConditionDenied, podcert.ConditionTrue)}, want: podcert.Denied},
		{name: "Failed", conditions: []podcert.Condition{cond(podcert.ConditionFailed, podcert.ConditionTrue)}, want: podcert.Failed},
		{name: "False Issued: not decided", conditions: []podcert.Condition{cond(podcert.ConditionIssued, "False")}},
		{name: "another condition type: not decided", conditions: []podcert.Condition{cond("Progressing", podcert.ConditionTrue)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, podcert.Status{Conditions: tc.conditions}.Outcome())
		})
	}
}
