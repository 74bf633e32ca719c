package azurekms

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/stepkms"
)

// classify explains a Key Vault failure; what says what failed.
func classify(r keystore.Ref, what string, err error) *keystore.StoreError {
	e := stepkms.StoreError(r, what, "check the key and ksa's Azure identity", err)
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
