package tokenexchange

import (
	"context"
	"time"

	"github.com/ksa-go/ksa/credprovider"
)

// ProviderConfig configures [Provider]: a credential provider that
// exchanges the pod's token for a registry credential.
type ProviderConfig struct {
	// Exchanger is the token endpoint; required.
	Exchanger *Exchanger
	// Check, when set, verifies the pod's token offline before it is sent
	// anywhere (credprovider.CheckToken).
	Check *credprovider.TokenCheck
	// Username goes with the issued token to the registry (the registry's
	// convention: "oauth2accesstoken", "<token>", ...).
	Username string
	// Cache is how long the kubelet may keep the credential, shortened by
	// credprovider.Respond to the issued token's and the pod's token's
	// expiry. Its zero value: not cached.
	Cache credprovider.Cache
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Provider returns the credential provider of cfg: for each request, the
// token checked (when cfg.Check is set), exchanged, and the issued token
// given as the registry password. A request without a token is refused
// with credprovider.ErrNoToken.
func Provider(cfg ProviderConfig) (credprovider.Provider, error) {
	if cfg.Exchanger == nil {
		return nil, configError("ProviderConfig.Exchanger", "is required")
	}
	if cfg.Check != nil && (cfg.Check.Verify == nil || cfg.Check.Audience == "") {
		return nil, configError("ProviderConfig.Check", "needs Verify and Audience")
	}
	return credprovider.ProviderFunc(func(ctx context.Context, req *credprovider.Request) (*credprovider.Response, error) {
		if req.ServiceAccountToken == "" {
			return nil, credprovider.ErrNoToken
		}
		if cfg.Check != nil {
			if _, err := credprovider.CheckToken(ctx, req, *cfg.Check); err != nil {
				return nil, err
			}
		}
		tok, err := cfg.Exchanger.Exchange(ctx, req.ServiceAccountToken)
		if err != nil {
			return nil, err
		}
		cred := credprovider.Credential{Username: cfg.Username, Password: tok.AccessToken, Expiry: tok.Expiry}
		return credprovider.Respond(req, cred, cfg.Cache, cfg.Now)
	}), nil
}
