package podcertctl

import (
	"fmt"
	"strings"
	"time"

	"github.com/ksa-go/ksa"
)

// Defaults of [LeaderElectionConfig]: kube-controller-manager's.
const (
	// DefaultLeaseDuration is how long a Lease not renewed stays held: a
	// replica takes over a holder's Lease once it has seen the Lease
	// unchanged for that long.
	DefaultLeaseDuration = 15 * time.Second
	// DefaultRenewDeadline is how long the holder goes without renewing
	// its Lease before it stops publishing.
	DefaultRenewDeadline = 10 * time.Second
	// DefaultRetryPeriod is how often the holder renews its Lease and the
	// other replicas try to take it.
	DefaultRetryPeriod = 2 * time.Second
)

// LeaderElectionConfig elects, among the replicas of one signer, the one
// that publishes the ClusterTrustBundle and rotates the CA: the holder of
// a coordination.k8s.io/v1 Lease. Every replica decides requests whoever
// holds it (see the package's "Replicas and leader election"). Namespace
// and Identity are required; every other zero value is a documented
// default.
//
// A holder stops publishing once RenewDeadline has passed since it last
// renewed its Lease; another replica takes over once it has seen the Lease
// unchanged for the LeaseDuration the Lease states, which New holds longer
// than RenewDeadline, so two replicas never publish as holders at once
// (while their clocks run at the same rate). A holder that stops (Run's
// context ends) stops publishing first, then gives the Lease up, so
// another replica takes it at its next try rather than after
// LeaseDuration.
type LeaderElectionConfig struct {
	// Namespace is the Lease's namespace: the controller's own (its RBAC
	// grants Leases there, [RBACConfig.LeaderElection]). Required.
	Namespace string
	// Name is the Lease's name. Empty: [DefaultLeaseName] of the signer
	// name.
	Name string
	// Identity names this replica in the Lease: its pod's name, unique
	// among the replicas (two replicas of one identity would both hold
	// it). At most 253 characters. Required.
	Identity string
	// LeaseDuration is how long a Lease not renewed stays held, written
	// in the Lease in whole seconds (rounded up). It must be longer than
	// RenewDeadline. Zero: [DefaultLeaseDuration].
	LeaseDuration time.Duration
	// RenewDeadline is how long the holder tries to renew its Lease
	// before it stops publishing; it also bounds each call to the API
	// server about the Lease. It must be longer than RetryPeriod. Zero:
	// [DefaultRenewDeadline].
	RenewDeadline time.Duration
	// RetryPeriod is how often the holder renews and the others try.
	// Zero: [DefaultRetryPeriod].
	RetryPeriod time.Duration
}

// maxIdentity bounds LeaderElectionConfig.Identity: the length of an
// object name, ample for a pod's.
const maxIdentity = ksa.MaxObjectNameLength

// DefaultLeaseName is the Lease leader election holds for a signer when
// LeaderElectionConfig.Name is empty: "ksa-podcert." and the signer name,
// its "/" turned into "." ("ksa-podcert.example.com.pods" for
// "example.com/pods").
func DefaultLeaseName(signerName string) string {
	return "ksa-podcert." + strings.ReplaceAll(signerName, "/", ".")
}

// leaseConfig checks cfg and returns it with its defaults set.
func leaseConfig(cfg LeaderElectionConfig, signerName string) (LeaderElectionConfig, error) {
	fail := func(field, reason string) error {
		return &ksa.ConfigError{Field: "podcertctl.Config.LeaderElection." + field, Reason: reason}
	}
	if cfg.Name == "" {
		cfg.Name = DefaultLeaseName(signerName)
		if !ksa.IsObjectName(cfg.Name) {
			return cfg, fail("Name", fmt.Sprintf("is empty, and the default %q is not an object name (a DNS-1123 subdomain of at most 253 characters): name the Lease", cfg.Name))
		}
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.LeaseDuration, DefaultLeaseDuration}, {&cfg.RenewDeadline, DefaultRenewDeadline}, {&cfg.RetryPeriod, DefaultRetryPeriod}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"LeaseDuration", cfg.LeaseDuration}, {"RenewDeadline", cfg.RenewDeadline}, {"RetryPeriod", cfg.RetryPeriod}} {
		if d.v < 0 {
			return cfg, fail(d.field, "is negative")
		}
	}
	switch {
	case !ksa.IsNamespace(cfg.Namespace):
		return cfg, fail("Namespace", fmt.Sprintf("%q is not a namespace name (a DNS-1123 label)", cfg.Namespace))
	case !ksa.IsObjectName(cfg.Name):
		return cfg, fail("Name", fmt.Sprintf("%q is not an object name (a DNS-1123 subdomain)", cfg.Name))
	case cfg.Identity == "":
		return cfg, fail("Identity", "is empty: give each replica its own, such as its pod's name")
	case len(cfg.Identity) > maxIdentity:
		return cfg, fail("Identity", fmt.Sprintf("is %d characters long, over %d", len(cfg.Identity), maxIdentity))
	case cfg.RenewDeadline <= cfg.RetryPeriod:
		return cfg, fail("RenewDeadline", fmt.Sprintf("%s is not longer than RetryPeriod (%s): the holder would lose its Lease between two renewals", cfg.RenewDeadline, cfg.RetryPeriod))
	case cfg.LeaseDuration <= cfg.RenewDeadline:
		return cfg, fail("LeaseDuration", fmt.Sprintf("%s is not longer than RenewDeadline (%s): another replica could take over while the holder still publishes", cfg.LeaseDuration, cfg.RenewDeadline))
	case cfg.LeaseDuration > maxLeaseDuration:
		return cfg, fail("LeaseDuration", fmt.Sprintf("%s is over %s", cfg.LeaseDuration, maxLeaseDuration))
	}
	return cfg, nil
}

// maxLeaseDuration bounds LeaseDuration: a Lease states it in seconds as
// an int32; a day is more than any failover should wait.
const maxLeaseDuration = 24 * time.Hour

// leaseSeconds is d in whole seconds, rounded up, as a Lease states it.
func leaseSeconds(d time.Duration) int32 {
	return int32((d + time.Second - 1) / time.Second)
}
