package credspec

import (
	"strings"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/admissionauth"
	"github.com/ksa-go/ksa/tokens"
)

// CallersConfig describes the callers the GMSA webhook lets through
// (Kubernetes 1.37, alpha): holders of a token bound to its
// MutatingWebhookConfiguration (for /mutate) or ValidatingWebhookConfiguration
// (for /validate), both named Configuration, for the path's URL.
type CallersConfig struct {
	// Tokens validates the tokens (issuer, keys, expiry).
	Tokens admissionauth.TokenCheck
	// URL is the webhook's URL as registered, without the path:
	// https://NAME.NAMESPACE.svc:PORT for a Service (port 443 when the
	// configuration gives none), or clientConfig.url's scheme and host.
	// The audiences are URL+MutatePath and URL+ValidatePath.
	URL string
	// Configuration is the name of both webhook configurations.
	Configuration string
	// ServiceAccounts are the accounts the callers' tokens are issued to.
	ServiceAccounts []ksa.ServiceAccount
	// Mode is admissionauth.Require (the zero value) or Accept.
	Mode admissionauth.Mode
}

// Verifiers returns the HandlerConfig's MutateCallers and ValidateCallers.
// Errors are *ksa.ConfigError.
func (c CallersConfig) Verifiers() (mutate, validate *admissionauth.Verifier, err error) {
	if strings.HasSuffix(c.URL, "/") || strings.Contains(strings.TrimPrefix(c.URL, "https://"), "/") {
		return nil, nil, &ksa.ConfigError{Field: "credspec.CallersConfig.URL", Reason: "must be the webhook's https URL without a path"}
	}
	build := func(kind tokens.BoundKind, path string) (*admissionauth.Verifier, error) {
		return admissionauth.New(admissionauth.Config{
			Tokens:          c.Tokens,
			Audience:        c.URL + path,
			Configurations:  []admissionauth.Configuration{{Kind: kind, Name: c.Configuration}},
			ServiceAccounts: c.ServiceAccounts,
			Mode:            c.Mode,
		})
	}
	if mutate, err = build(tokens.BoundMutatingWebhookConfiguration, MutatePath); err != nil {
		return nil, nil, err
	}
	if validate, err = build(tokens.BoundValidatingWebhookConfiguration, ValidatePath); err != nil {
		return nil, nil, err
	}
	return mutate, validate, nil
}
