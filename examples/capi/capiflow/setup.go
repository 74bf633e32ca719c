package capiflow

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/tokens"
)

// ErrIssuerCheck: the issuer, once published, is not one relying parties
// can use (publish.Check found errors); the [*CheckError] lists them.
var ErrIssuerCheck = errors.New("the published issuer fails its check")

// CheckError is an issuer whose check found errors. It matches
// [ErrIssuerCheck].
type CheckError struct {
	// Report is the check's.
	Report *publish.Report
}

// Error lists the errors found, with their fixes.
func (e *CheckError) Error() string {
	var b strings.Builder
	b.WriteString("relying parties cannot use " + e.Report.Issuer + ":")
	for _, f := range e.Report.Findings {
		if f.Severity == publish.SeverityError {
			b.WriteString(" [" + f.Code + "] " + f.Problem + " (fix: " + f.Fix + ");")
		}
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Is matches ErrIssuerCheck.
func (e *CheckError) Is(target error) bool { return target == ErrIssuerCheck }

// Setup is what [Flow.Setup] did.
type Setup struct {
	// Distribution is how the key reaches the cluster.
	Distribution Distribution
	// KeyID is the first key's; Key its reference in the key store,
	// empty for a key made in memory.
	KeyID, Key string
	// Published is the publication of the issuer's documents.
	Published *publish.PublishResult
	// Check is the published issuer's check, as the clouds fetch it.
	Check *publish.Report
	// Refused is clusterapi.NewSecret's refusal of the key, matching
	// clusterapi.ErrKeyNotExportable (external signer).
	Refused error
	// Pair is the <cluster>-sa Secret as read back from the API server
	// (cluster secret).
	Pair *clusterapi.KeyPair
	// Ring is the ring file written to the ConfigMap (external signer).
	Ring *extsigner.RingFile
	// Verified is a token minted with the key and verified through the
	// published documents.
	Verified *tokens.Result
}

// Setup sets the cluster up, in the order that keeps every token
// verifiable: it makes the first key (in Config.Keys, or in memory),
// publishes the issuer with it (only where the location publishes
// nothing yet: an issuer already there is never replaced, the error
// matches publish.ErrChanged) and checks it as the clouds fetch it, then
// hands the key to the cluster: clusterapi.NewSecret renders the
// <cluster>-sa Secret, which is created and read back, or refuses the key
// (clusterapi.ErrKeyNotExportable), and the ring file the external
// signers follow is created instead. It ends by verifying a token minted
// with the key. A setup that fails leaves what it wrote (the key, the
// documents), which a later setup does not write over: remove them before
// running it again.
func (f *Flow) Setup(ctx context.Context) (*Setup, error) {
	now := f.now()
	s := &Setup{}
	signer, err := f.firstKey(ctx, now, s)
	if err != nil {
		return s, err
	}
	key, err := jwks.NewKey(signer.Public())
	if err != nil {
		return s, fmt.Errorf("the first key: %w", err)
	}
	s.KeyID = key.KeyID
	if err := f.publishFirst(ctx, key, s); err != nil {
		return s, err
	}
	secret, err := clusterapi.NewSecret(f.cfg.Cluster, signer, clusterapi.SecretOptions{Namespace: f.cfg.Namespace})
	switch {
	case err == nil:
		s.Distribution = ClusterSecret
		if _, err := f.cfg.Kube.Secrets(f.cfg.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			return s, fmt.Errorf("creating Secret %s/%s: %w", f.cfg.Namespace, secret.Name, err)
		}
		if s.Pair, err = f.readSecret(ctx); err != nil {
			return s, err
		}
		if s.Pair.KeyID != s.KeyID {
			return s, fmt.Errorf("the Secret %s/%s signs with kid %s, not the published %s", f.cfg.Namespace, secret.Name, s.Pair.KeyID, s.KeyID)
		}
	case errors.Is(err, clusterapi.ErrKeyNotExportable) && s.Key != "":
		s.Distribution, s.Refused = ExternalSigner, err
		s.Ring = &extsigner.RingFile{Keys: []extsigner.RingFileKey{{Key: s.Key, Primary: now}}}
		if err := f.Ring().Create(ctx, s.Ring, f.cfg.Cluster); err != nil {
			return s, err
		}
	default:
		return s, fmt.Errorf("the <cluster>-sa Secret: %w", err)
	}
	if s.Verified, err = f.Verify(ctx, signer); err != nil {
		return s, err
	}
	return s, nil
}

// firstKey makes the cluster's first key: in the key store, by the
// reference NewKeyRef gives, or in memory.
func (f *Flow) firstKey(ctx context.Context, now time.Time, s *Setup) (crypto.Signer, error) {
	if f.cfg.Keys == nil {
		return newSoftwareKey()
	}
	created, err := f.cfg.Keys.Create(ctx, f.cfg.NewKeyRef(f.keyName(now)), KeySpec())
	if err != nil {
		return nil, fmt.Errorf("creating the first key: %w", err)
	}
	s.Key = created.Ref
	signer, err := f.cfg.Keys.Open(ctx, created.Ref)
	if err != nil {
		return nil, fmt.Errorf("opening the first key: %w", err)
	}
	return signer, nil
}

// publishFirst renders the issuer's documents with key, writes them
// where the location holds none, and checks the issuer.
func (f *Flow) publishFirst(ctx context.Context, key jwks.Key, s *Setup) error {
	issuer := f.cfg.Issuer
	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: issuer, JWKSURI: oidc.JWKSURL(issuer)}, []jwks.Key{key})
	if err != nil {
		return fmt.Errorf("rendering the issuer's documents: %w", err)
	}
	// An empty Versions map: every write is conditional on the object
	// being absent.
	s.Published, err = publish.Publish(ctx, f.cfg.Store, &publish.Site{Discovery: docs.Discovery, KeySet: docs.JWKS},
		publish.PublishOptions{PublicURL: issuer, Versions: map[string]publish.Version{}})
	if err != nil {
		return fmt.Errorf("publishing the issuer (a location that publishes one already is left as it is): %w", err)
	}
	s.Check = publish.Check(ctx, issuer, publish.CheckOptions{HTTPClient: f.cfg.HTTPClient, Now: f.cfg.Now})
	if !s.Check.OK() {
		return &CheckError{Report: s.Check}
	}
	return nil
}

// ErrNoSecret: the cluster has no <cluster>-sa Secret.
var ErrNoSecret = errors.New("no <cluster>-sa Secret")

// Read reads the cluster's <cluster>-sa Secret back, checked with
// clusterapi.ReadSecret, and verifies a token minted with its key
// through the published documents: a Secret Cluster API generated itself
// holds a key nobody published, and fails. A missing Secret matches
// [ErrNoSecret].
func (f *Flow) Read(ctx context.Context) (*clusterapi.KeyPair, *tokens.Result, error) {
	pair, err := f.readSecret(ctx)
	if err != nil {
		return nil, nil, err
	}
	v, err := f.Verify(ctx, pair.Signer)
	return pair, v, err
}

// readSecret gets the Secret from the API server and reads it.
func (f *Flow) readSecret(ctx context.Context) (*clusterapi.KeyPair, error) {
	name := clusterapi.SecretName(f.cfg.Cluster)
	got, err := f.cfg.Kube.Secrets(f.cfg.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading Secret %s/%s: %w", f.cfg.Namespace, name, ErrNoSecret)
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s/%s: %w", f.cfg.Namespace, name, err)
	}
	pair, err := clusterapi.ReadSecret(got)
	if err != nil {
		return nil, fmt.Errorf("the Secret %s/%s: %w", f.cfg.Namespace, name, err)
	}
	return pair, nil
}

// now is the flow's time, to the second as ring files write it.
func (f *Flow) now() time.Time { return f.cfg.Now().UTC().Truncate(time.Second) }
