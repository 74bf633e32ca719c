package podcertcmd

import (
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// podNamespaceFile holds the namespace of a pod's service account, in
// every pod that mounts its token.
const podNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// leaseFlags are the leader-election flags of "ksa podcert serve".
type leaseFlags struct {
	on                        bool
	namespace, identity, name string
	duration, renew, retry    time.Duration
}

// leaseHelp is what "ksa podcert serve --help" says of leader election.
const leaseHelp = `Replicas: every replica decides requests (two replicas deciding one
request is harmless: the API server refuses the second status write, a
conflict, counted). With --leader-elect (the default in a pod) only the
holder of a coordination.k8s.io/v1 Lease in --leader-elect-namespace (the
pod's own by default) publishes the ClusterTrustBundle and rotates the
CA; a new holder reads the bundle and its rotation record first and keeps
every valid CA it finds. A replica signs only with a CA the bundle holds.
Outside a pod, leader election is off unless --leader-elect-namespace is
given; --leader-elect=false runs a single replica without a Lease.`

func (f *leaseFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.on, "leader-elect", true, "elect, by a Lease, the one replica that publishes the trust bundle and rotates the CA (on in a pod, or with --leader-elect-namespace)")
	fl.StringVar(&f.namespace, "leader-elect-namespace", "", "namespace of the Lease (default the pod's namespace)")
	fl.StringVar(&f.identity, "leader-elect-identity", "", "this replica's name in the Lease, unique among the replicas (default the host name: the pod's name)")
	fl.StringVar(&f.name, "leader-elect-lease", "", "name of the Lease (default ksa-podcert.<signer name with . for />)")
	fl.DurationVar(&f.duration, "leader-elect-lease-duration", podcertctl.DefaultLeaseDuration, "how long another replica waits, the Lease not renewed, before it takes over")
	fl.DurationVar(&f.renew, "leader-elect-renew-deadline", podcertctl.DefaultRenewDeadline, "how long the holder goes without renewing before it stops publishing")
	fl.DurationVar(&f.retry, "leader-elect-retry-period", podcertctl.DefaultRetryPeriod, "how often the holder renews and the others try")
}

// config returns the controller's leader election of the flags, nil when
// off: --leader-elect=false, --no-trust-bundle (nothing to publish), or
// outside a pod without --leader-elect-namespace.
func (f *leaseFlags) config(cmd *cobra.Command, noBundle bool, log *slog.Logger) (*podcertctl.LeaderElectionConfig, error) {
	fl := cmd.Flags()
	switch {
	case !f.on:
		return nil, nil
	case noBundle && fl.Changed("leader-elect"):
		return nil, base.Usage("leave out --leader-elect or --no-trust-bundle", "--leader-elect elects the replica that publishes the trust bundle, and --no-trust-bundle publishes none")
	case noBundle:
		return nil, nil
	}
	ns := f.namespace
	if ns == "" {
		b, err := os.ReadFile(podNamespaceFile)
		if err != nil {
			if fl.Changed("leader-elect") {
				return nil, base.Usage("give --leader-elect-namespace the namespace of the Lease", "--leader-elect: the pod's namespace cannot be read (%s)", podNamespaceFile)
			}
			log.Info("not in a pod: leader election off; every replica publishes the trust bundle", "hint", "give --leader-elect-namespace to elect one")
			return nil, nil
		}
		ns = strings.TrimSpace(string(b))
	}
	id := f.identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			return nil, base.Usage("give --leader-elect-identity a name unique among the replicas, such as the pod's", "--leader-elect: the host name cannot be read")
		}
		id = host
	}
	return &podcertctl.LeaderElectionConfig{Namespace: ns, Name: f.name, Identity: id,
		LeaseDuration: f.duration, RenewDeadline: f.renew, RetryPeriod: f.retry}, nil
}

// leaseFlagFor names the flags of the LeaderElectionConfig's fields.
func leaseFlagFor() base.FlagFor {
	return base.FlagFor{"LeaderElection": "--leader-elect", "LeaderElection.Namespace": "--leader-elect-namespace",
		"LeaderElection.Identity": "--leader-elect-identity", "LeaderElection.Name": "--leader-elect-lease",
		"LeaderElection.LeaseDuration": "--leader-elect-lease-duration", "LeaderElection.RenewDeadline": "--leader-elect-renew-deadline",
		"LeaderElection.RetryPeriod": "--leader-elect-retry-period",
		// Named so in the reasons of the checks.
		"LeaseDuration": "--leader-elect-lease-duration", "RenewDeadline": "--leader-elect-renew-deadline", "RetryPeriod": "--leader-elect-retry-period"}
}
