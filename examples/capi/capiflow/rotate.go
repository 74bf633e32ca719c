package capiflow

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"time"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/tokens"
)

// ErrNoKeyStore: a rotation asked of a flow whose keys are made in memory.
// Such a key is in the <cluster>-sa Secret, and rotates by three updates
// of it, each followed by a rollout of the control plane (package
// clusterapi's documentation), which this example does not do.
var ErrNoKeyStore = errors.New("no key store: a key in the <cluster>-sa Secret rotates with Secret updates and control-plane rollouts")

// Rotate moves the cluster's scheduled rotation one step
// (publish.Rotation.Step): the ring file in the [ConfigMapRing], the
// issuer's documents in Config.Store, the next key created in Config.Keys
// by NewKeyRef's reference, on Config.Cadence. It then verifies a token
// minted with the key the step is about, through the published documents:
// the next key when the step published it (relying parties accept it
// before it signs), else the key that signs. The step's result is
// returned with its error, if any.
func (f *Flow) Rotate(ctx context.Context) (*publish.StepResult, *tokens.Result, error) {
	if f.cfg.Keys == nil {
		return nil, nil, ErrNoKeyStore
	}
	now := f.now()
	rot, err := publish.NewRotation(publish.RotationConfig{
		Ring:    f.Ring(),
		Store:   f.cfg.Store,
		Keys:    f.cfg.Keys,
		NewKey:  f.newKey,
		Cadence: f.cfg.Cadence,
		Now:     func() time.Time { return now },
	})
	if err != nil {
		return nil, nil, err
	}
	res, err := rot.Step(ctx)
	if err != nil {
		return res, nil, fmt.Errorf("the rotation step: %w", err)
	}
	signer, err := f.stepKey(ctx, res)
	if err != nil {
		return res, nil, err
	}
	v, err := f.Verify(ctx, signer)
	return res, v, err
}

// newKey makes the rotation's next key in the key store.
func (f *Flow) newKey(ctx context.Context, r publish.KeyRequest) (string, error) {
	created, err := f.cfg.Keys.Create(ctx, f.cfg.NewKeyRef(f.keyName(r.Now)), KeySpec())
	if err != nil {
		return "", err
	}
	return created.Ref, nil
}

// stepKey opens the key a step is about: the next key it published, or
// the ring file's key that signed when it read the ring file.
func (f *Flow) stepKey(ctx context.Context, res *publish.StepResult) (crypto.Signer, error) {
	if res.NextKey != "" {
		signer, err := f.cfg.Keys.Open(ctx, res.NextKey)
		if err != nil {
			return nil, fmt.Errorf("opening the next key: %w", err)
		}
		return signer, nil
	}
	for _, k := range res.Ring.Keys {
		if k.Key == "" {
			continue
		}
		signer, err := f.cfg.Keys.Open(ctx, k.Key)
		if err != nil {
			return nil, fmt.Errorf("opening the ring file's key: %w", err)
		}
		if kid, err := jwks.KeyID(signer.Public()); err == nil && kid == res.Action.Signer {
			return signer, nil
		}
	}
	return nil, fmt.Errorf("the ring file holds no key with the signer's kid %s", res.Action.Signer)
}
