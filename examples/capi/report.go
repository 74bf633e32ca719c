package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/examples/capi/capiflow"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/rotation"
	"github.com/ksa-go/ksa/tokens"
)

// report prints what a run did, as far as it went.
func report(w io.Writer, f *flags, flow *capiflow.Flow, res *capiflow.Result) {
	cluster := f.namespace + "/" + f.cluster
	switch {
	case res.Setup != nil:
		reportSetup(w, f, cluster, flow, res.Setup)
	case res.Step != nil:
		reportStep(w, f, cluster, res.Step)
	case res.Pair != nil:
		fmt.Fprintf(w, "cluster %s: Secret %s/%s read back (kid %s); a key in the Secret rotates with Secret updates and control-plane rollouts (package clusterapi), not with this program\n",
			cluster, f.namespace, clusterapi.SecretName(f.cluster), res.Pair.KeyID)
	}
	if res.Verified != nil {
		reportToken(w, flow, res.Verified)
	}
}

func reportSetup(w io.Writer, f *flags, cluster string, flow *capiflow.Flow, s *capiflow.Setup) {
	fmt.Fprintf(w, "cluster %s: set up\n", cluster)
	if s.KeyID == "" {
		return
	}
	where := "made in memory"
	if s.Key != "" {
		where = "in the key store: " + s.Key
	}
	fmt.Fprintf(w, "  first key kid %s, %s\n", s.KeyID, where)
	if s.Published == nil {
		return
	}
	var names []string
	for _, o := range s.Published.Objects {
		names = append(names, o.Name)
	}
	fmt.Fprintf(w, "  published issuer %s to %s: %s\n", flow.Issuer(), f.to, strings.Join(names, ", "))
	if s.Check == nil {
		return
	}
	if len(s.Check.Findings) == 0 {
		fmt.Fprintln(w, "  checked as Entra ID, AWS and Google fetch it: no problems found")
	}
	for _, fd := range s.Check.Findings {
		fmt.Fprintf(w, "  checked: %s [%s] %s; fix: %s\n", fd.Severity, fd.Code, fd.Problem, fd.Fix)
	}
	switch {
	case s.Pair != nil:
		fmt.Fprintf(w, "  Secret %s/%s written and read back: kid %s, the key Cluster API copies to every control-plane machine\n",
			f.namespace, clusterapi.SecretName(f.cluster), s.Pair.KeyID)
	case s.Refused != nil:
		fmt.Fprintf(w, "  Secret %s/%s not written: %v\n", f.namespace, clusterapi.SecretName(f.cluster), s.Refused)
		if s.Ring != nil {
			fmt.Fprintf(w, "  ring file written to ConfigMap %s/%s: the cluster signs through external signers following it (ksa signer serve)\n",
				f.namespace, capiflow.RingName(f.cluster))
		}
	}
}

func reportStep(w io.Writer, f *flags, cluster string, r *publish.StepResult) {
	a := r.Action
	fmt.Fprintf(w, "cluster %s: rotation step at %s (stage %s): %s", cluster, stamp(r.Now), a.Stage, a.Kind)
	switch a.Kind {
	case rotation.Wait:
		if a.At.IsZero() {
			fmt.Fprintf(w, " (%s)\n", a.For)
		} else {
			fmt.Fprintf(w, " until %s (%s)\n", stamp(a.At), a.For)
		}
	case rotation.SignNext:
		fmt.Fprintf(w, ": kid %s signs from %s\n", a.Next, stamp(a.At))
	default:
		fmt.Fprintln(w)
	}
	if r.NextKey != "" {
		fmt.Fprintf(w, "  next key kid %s, in the key store: %s, published to %s\n", r.NextKeyID, r.NextKey, f.to)
	}
	if len(r.Withdrawn) > 0 {
		fmt.Fprintf(w, "  withdrawn from %s: kid %s\n", f.to, strings.Join(r.Withdrawn, ", kid "))
	}
	for _, s := range a.Plan {
		fmt.Fprintf(w, "  then %s, from %s\n", s.Kind, stamp(s.At))
	}
}

func reportToken(w io.Writer, flow *capiflow.Flow, v *tokens.Result) {
	fmt.Fprintf(w, "  a token signed by kid %s verified through %s as %s\n", v.KeyID, flow.Issuer(), v.UserInfo().Username)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
