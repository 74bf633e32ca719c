package capiflow

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/rotation"
	"github.com/ksa-go/ksa/tokens"
)

// Keys is a key store the flow makes and opens the issuer's keys in: a
// keystore.Openers holding the stores a program links, or one store
// (*pkcs11.Store).
type Keys interface {
	keystore.Opener
	keystore.Creator
}

// Kube is what the flow asks of the management cluster's API server:
// ConfigMaps (the ring file) and Secrets (Cluster API's). A client-go
// clientset's CoreV1() is one.
type Kube interface {
	corev1client.ConfigMapsGetter
	corev1client.SecretsGetter
}

// KeySpec returns the kind of every key the flow makes: RSA 2048, since
// Microsoft Entra ID accepts RS256 tokens only.
func KeySpec() keystore.KeySpec { return keystore.KeySpec{RSA: true, Bits: 2048} }

// DefaultCadence returns the rotation's cadence when Config.Cadence is
// zero: a new key every 90 days, published an hour before it signs (the
// max-age the key set is served with), signing a minute after the ring
// file says so (the time a signer takes to read it).
func DefaultCadence() rotation.Cadence {
	return rotation.Cadence{Every: 90 * 24 * time.Hour, Delay: time.Minute, Propagation: time.Hour}
}

// Config is what a [Flow] works with.
type Config struct {
	// Cluster is the Cluster's name; Namespace its namespace in the
	// management cluster. Both required.
	Cluster, Namespace string
	// Kube is the management cluster's API. Required.
	Kube Kube
	// Store is where the issuer is published (publish.Open of its
	// location). Required.
	Store publish.Store
	// Issuer is the URL relying parties read the issuer at; empty means
	// Store.PublicURL(), where the cloud serves the location (required
	// for a directory, which has none).
	Issuer string
	// HTTPClient reads the issuer as relying parties do (the check and
	// the verification); nil means one with a 30-second timeout and the
	// system's roots.
	HTTPClient *http.Client
	// Keys is the key store the issuer's keys are made in ([KeySpec]);
	// nil means memory, and the key goes to the cluster in the
	// <cluster>-sa Secret.
	Keys Keys
	// NewKeyRef returns the reference of a new key named name in Keys
	// (name is the cluster's name, "-sa-" and the time, such as
	// cluster-1-sa-20260131000000). Required with Keys.
	NewKeyRef func(name string) string
	// Cadence is the rotation's (see publish.RotationConfig.Cadence); the
	// zero value means [DefaultCadence].
	Cadence rotation.Cadence
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Flow is the issuer and key lifecycle of one cluster.
type Flow struct {
	cfg Config
}

// New checks cfg and returns the cluster's flow.
func New(cfg Config) (*Flow, error) {
	if err := clusterapi.CheckClusterName(cfg.Cluster); err != nil {
		return nil, &ksa.ConfigError{Field: "capiflow.Config.Cluster", Reason: "is not a cluster name", Err: err}
	}
	if err := ksa.CheckNamespace("namespace", cfg.Namespace); err != nil {
		return nil, &ksa.ConfigError{Field: "capiflow.Config.Namespace", Reason: "is not a namespace", Err: err}
	}
	switch {
	case cfg.Kube == nil:
		return nil, &ksa.ConfigError{Field: "capiflow.Config.Kube", Reason: "is required"}
	case cfg.Store == nil:
		return nil, &ksa.ConfigError{Field: "capiflow.Config.Store", Reason: "is required"}
	case cfg.Keys != nil && cfg.NewKeyRef == nil:
		return nil, &ksa.ConfigError{Field: "capiflow.Config.NewKeyRef", Reason: "is required with Keys"}
	}
	if cfg.Issuer == "" {
		cfg.Issuer = cfg.Store.PublicURL()
	}
	if cfg.Issuer == "" {
		return nil, &ksa.ConfigError{Field: "capiflow.Config.Issuer", Reason: "is required for a store served nowhere of its own (a directory)"}
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Cadence == (rotation.Cadence{}) {
		cfg.Cadence = DefaultCadence()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Flow{cfg: cfg}, nil
}

// Issuer returns the issuer URL the flow publishes and verifies at.
func (f *Flow) Issuer() string { return f.cfg.Issuer }

// Distribution is how a cluster's control plane gets its signing key.
type Distribution int

const (
	// ClusterSecret: the key pair is Cluster API's <cluster>-sa Secret,
	// copied to every control-plane machine.
	ClusterSecret Distribution = iota + 1
	// ExternalSigner: the key stays in its key store; the cluster signs
	// through external signers following the ring file.
	ExternalSigner
)

// String returns "secret" or "external signer".
func (d Distribution) String() string {
	switch d {
	case ClusterSecret:
		return "secret"
	case ExternalSigner:
		return "external signer"
	}
	return fmt.Sprintf("Distribution(%d)", int(d))
}

// Result is what one [Flow.Reconcile] did.
type Result struct {
	// Distribution is the cluster's.
	Distribution Distribution
	// Setup is set when the run set the cluster up.
	Setup *Setup
	// Step is set when the run moved the rotation (external signer).
	Step *publish.StepResult
	// Pair is the Secret read back (cluster secret).
	Pair *clusterapi.KeyPair
	// Verified is the token the run minted and verified through the
	// published documents.
	Verified *tokens.Result
}

// Reconcile is one run for the cluster: [Flow.Setup] when neither the
// ring ConfigMap nor the <cluster>-sa Secret exists, [Flow.Rotate] when
// the ring ConfigMap does, [Flow.Read] when the Secret does. What the run
// did is returned with its error, as far as it went.
func (f *Flow) Reconcile(ctx context.Context) (*Result, error) {
	ring := f.Ring()
	_, _, err := ring.Read(ctx)
	switch {
	case err == nil:
		step, v, err := f.Rotate(ctx)
		return &Result{Distribution: ExternalSigner, Step: step, Verified: v}, err
	case !errors.Is(err, publish.ErrNotFound):
		return nil, fmt.Errorf("reading the ring file: %w", err)
	}
	pair, v, err := f.Read(ctx)
	if !errors.Is(err, ErrNoSecret) {
		return &Result{Distribution: ClusterSecret, Pair: pair, Verified: v}, err
	}
	s, err := f.Setup(ctx)
	return &Result{Distribution: s.Distribution, Setup: s, Pair: s.Pair, Verified: s.Verified}, err
}

// newSoftwareKey makes a key in memory, for the Secret.
func newSoftwareKey() (*rsa.PrivateKey, error) {
	return rsa.GenerateKey(rand.Reader, KeySpec().Bits)
}

// keyName names a key made at now: the cluster's name, "-sa-" and the
// time to the second.
func (f *Flow) keyName(now time.Time) string {
	return f.cfg.Cluster + "-sa-" + now.UTC().Format("20060102150405")
}
