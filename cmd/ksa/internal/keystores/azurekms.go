//go:build !ksa_noazurekms

package keystores

import (
	"context"
	"crypto"
	"crypto/elliptic"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"go.step.sm/crypto/kms/apiv1"
	"go.step.sm/crypto/kms/azurekms"

	"github.com/ksa-go/ksa/keystore"
)

// azurekmsMissing is empty: this build has Azure Key Vault.
const azurekmsMissing = ""

// azureManagerURI is the URI of the Key Vault client of r's cloud and
// identity: no key, no secret.
func azureManagerURI(r keystore.Ref) string {
	var attrs []string
	for _, n := range []string{"environment", "client-id", "tenant-id", "aad-endpoint"} {
		if v := r.Attr(n); v != "" {
			attrs = append(attrs, n+"="+url.QueryEscape(v))
		}
	}
	if len(attrs) == 0 {
		return ""
	}
	return "azurekms:" + strings.Join(attrs, ";")
}

// azureKeyURI is the URI of r's key for go.step.sm.
func azureKeyURI(r keystore.Ref) string {
	uri := "azurekms:name=" + url.QueryEscape(r.Attr("name")) + ";vault=" + url.QueryEscape(r.Attr("vault"))
	if v := r.Attr("version"); v != "" {
		uri += "?version=" + url.QueryEscape(v)
	}
	return uri
}

// azureManager returns the Key Vault client of r's cloud and identity.
func (s *Stores) azureManager(ctx context.Context, r keystore.Ref) (*azurekms.KeyVault, error) {
	uri := azureManagerURI(r)
	m, err := s.remote("azurekms\x00"+uri, func() (io.Closer, error) {
		km, err := aside(ctx, func() (*azurekms.KeyVault, error) {
			return azurekms.New(context.WithoutCancel(ctx), apiv1.Options{Type: apiv1.AzureKMS, URI: uri})
		})
		if err != nil {
			return nil, err
		}
		return km, nil
	})
	if err != nil {
		return nil, azureError(r, "the Azure Key Vault client cannot be made", err)
	}
	return m.(*azurekms.KeyVault), nil
}

func (s *Stores) openAzureKMS(ctx context.Context, r keystore.Ref) (crypto.Signer, error) {
	km, err := s.azureManager(ctx, r)
	if err != nil {
		return nil, err
	}
	signer, err := aside(ctx, func() (crypto.Signer, error) {
		return km.CreateSigner(&apiv1.CreateSignerRequest{SigningKey: azureKeyURI(r)})
	})
	if err != nil {
		return nil, azureError(r, "cannot be opened", err)
	}
	return newRemoteSigner(r, signer, azureError), nil
}

func (s *Stores) createAzureKMS(ctx context.Context, r keystore.Ref, spec KeySpec) (Created, error) {
	if err := supports(r, "Azure Key Vault", spec, []int{2048, 3072, 4096}, elliptic.P256(), elliptic.P384(), elliptic.P521()); err != nil {
		return Created{}, err
	}
	km, err := s.azureManager(ctx, r)
	if err != nil {
		return Created{}, err
	}
	alg, bits := algorithm(spec)
	req := &apiv1.CreateKeyRequest{Name: azureKeyURI(r), SignatureAlgorithm: alg, Bits: bits}
	if r.Attr("hsm") == "true" {
		req.ProtectionLevel = apiv1.HSM
	}
	resp, err := aside(ctx, func() (*apiv1.CreateKeyResponse, error) { return km.CreateKey(req) })
	if err != nil {
		return Created{}, azureError(r, "the key cannot be created", err)
	}
	created, err := keystore.ParseRef(resp.Name)
	if err != nil {
		return Created{}, storeError(r, "Key Vault named the new key in a way ksa cannot read", bugFix, err)
	}
	return Created{Ref: r.With("version", created.Attr("version")).String(), Public: resp.PublicKey}, nil
}

// azureError explains a Key Vault failure; what says what failed.
func azureError(r keystore.Ref, what string, err error) *Error {
	e := storeError(r, what, "check the key and ksa's Azure identity", err)
	var resp *azcore.ResponseError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		e.What = what + ": Azure Key Vault did not answer"
		e.Fix = "check that " + r.Attr("vault") + ".vault.azure.net (or the environment's) is reachable and retry"
	case errors.As(err, &resp):
		e.Detail = resp.ErrorCode
		switch resp.StatusCode {
		case http.StatusNotFound:
			e.What, e.Detail = what+": vault "+r.Attr("vault")+" has no key "+r.Attr("name"), ""
			e.Fix = "check name=, vault= and version= (az keyvault key list --vault-name VAULT)"
		case http.StatusUnauthorized, http.StatusForbidden:
			e.Fix = "give ksa's Azure identity the Key Vault Crypto User role on the vault (get and sign; create to make keys)"
		}
	case strings.Contains(strings.ToLower(err.Error()), "credential"):
		e.Fix = "give ksa an Azure identity: AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET or AZURE_FEDERATED_TOKEN_FILE, or a managed identity"
	}
	return e
}
