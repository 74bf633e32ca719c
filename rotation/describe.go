package rotation

import "strings"

// Describe words each step of a plan in plain English, one line a step,
// for a person reading what a scheduled rotation will do: the first step
// is the one the current stage waits for, the others follow it. The key
// IDs are as the plan holds them: escape them before printing them to a
// terminal.
func Describe(plan []Step) []string {
	out := make([]string, 0, len(plan))
	for i, st := range plan {
		out = append(out, st.describe(i == 0))
	}
	return out
}

// describe words one step; first: the step the stage waits for.
func (st Step) describe(first bool) string {
	switch st.Kind {
	case PublishNext:
		if first {
			return "create the next key and publish it beside kid " + st.Signer
		}
		return "create the key after " + keyName(st.Signer) + " and publish it"
	case SignNext:
		next := ""
		if len(st.Keys) > 0 {
			next = st.Keys[0]
		}
		return keyName(next) + " signs (kid " + st.Signer + " stays published)"
	case RetireOld:
		old := "retire kid " + strings.Join(st.Keys, ", kid ")
		if first {
			return old + ": every token signed before kid " + st.Signer + " signs has expired"
		}
		return old + ": every token it signed has expired"
	}
	return st.Kind.String()
}

// keyName names a key of a plan: by its ID, or as the next key when it is
// not made yet.
func keyName(id string) string {
	if id == "" {
		return "the next key"
	}
	return "kid " + id
}
