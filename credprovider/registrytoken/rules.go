package registrytoken

import (
	"fmt"
	"path"
	"slices"

	"github.com/ksa-go/ksa"
)

// Actions a [Rule] may grant on a repository, as the registry names them.
const (
	ActionPull   = "pull"
	ActionPush   = "push"
	ActionDelete = "delete"
	// ActionAll is every action: the registry reads "*" as any action.
	ActionAll = "*"
)

// Any matches every namespace or every service account in a [Rule].
const Any = "*"

// Rule grants a service account actions on repositories. A request gets,
// for each repository scope, the union of the actions of every rule that
// matches the token's service account and the repository, intersected with
// the actions it asked for.
type Rule struct {
	// Namespace is the service account's namespace, or Any. Required.
	Namespace string
	// ServiceAccount is the service account's name, or Any. Required.
	ServiceAccount string
	// Repositories are repository name patterns in the syntax of path.Match
	// ("team/app", "team/*", "*/base"): '*' never crosses a '/'. At least
	// one is required.
	Repositories []string
	// Actions are the actions granted: ActionPull, ActionPush, ActionDelete
	// or ActionAll. Empty grants ActionPull alone.
	Actions []string
}

func (r Rule) validate(i int) error {
	field := fmt.Sprintf("Config.Rules[%d]", i)
	if r.Namespace == "" {
		return configError(field+".Namespace", "is required (a namespace, or \"*\" for any)")
	}
	if r.ServiceAccount == "" {
		return configError(field+".ServiceAccount", "is required (a name, or \"*\" for any)")
	}
	if len(r.Repositories) == 0 {
		return configError(field+".Repositories", "is empty: the rule would grant nothing")
	}
	for j, p := range r.Repositories {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return configError(fmt.Sprintf("%s.Repositories[%d]", field, j), "is not a path.Match pattern")
		}
	}
	for j, a := range r.Actions {
		switch a {
		case ActionPull, ActionPush, ActionDelete, ActionAll:
		default:
			return configError(fmt.Sprintf("%s.Actions[%d]", field, j), "is not pull, push, delete or *")
		}
	}
	return nil
}

func (r Rule) matches(sa ksa.ServiceAccount, repo string) bool {
	if r.Namespace != Any && r.Namespace != sa.Namespace {
		return false
	}
	if r.ServiceAccount != Any && r.ServiceAccount != sa.Name {
		return false
	}
	for _, p := range r.Repositories {
		if ok, _ := path.Match(p, repo); ok {
			return true
		}
	}
	return false
}

func (r Rule) actions() []string {
	if len(r.Actions) == 0 {
		return []string{ActionPull}
	}
	return r.Actions
}

// Access is what a registry token grants on one resource: its "access"
// claim entry.
type Access struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

// grant returns the access rules give sa for the scopes asked: one entry
// per repository scope granted at least one action, the actions in the
// order asked. A "*" asked for is granted only by a rule granting "*".
func grant(rules []Rule, sa ksa.ServiceAccount, scopes []Scope) []Access {
	var out []Access
	for _, sc := range scopes {
		if sc.Type != "repository" {
			continue
		}
		var allowed []string
		for _, r := range rules {
			if r.matches(sa, sc.Name) {
				allowed = append(allowed, r.actions()...)
			}
		}
		var got []string
		for _, a := range sc.Actions {
			if slices.Contains(allowed, a) || slices.Contains(allowed, ActionAll) && a != ActionAll {
				got = append(got, a)
			}
		}
		if len(got) > 0 {
			out = append(out, Access{Type: sc.Type, Name: sc.Name, Actions: got})
		}
	}
	return out
}
