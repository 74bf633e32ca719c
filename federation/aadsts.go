package federation

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/ksa-go/ksa/tokens"
)

// aadstsCode finds the first AADSTS number in a description.
var aadstsCode = regexp.MustCompile(`AADSTS(\d+)`)

// entraCodes maps the AADSTS codes users meet most with workload identity
// to a sentinel and the usual fix.
var entraCodes = map[int]struct {
	sentinel error
	fix      func(c *tokens.Claims) string
}{
	700024: {ErrAssertionExpired, func(*tokens.Claims) string {
		return "the assertion was outside its validity window: the client sent a stale projected token (ksa re-reads the file when it changes) or the node's clock is off"
	}},
	70021: {ErrNoMatchingCredential, func(c *tokens.Claims) string {
		return "create a federated identity credential on the app or identity whose issuer, subject and audience equal the token's" + claimsText(c) + " exactly (no trailing slash); new credentials can take a few minutes to propagate"
	}},
	700211: {ErrAssertionIssuer, func(c *tokens.Claims) string {
		return "the federated identity credential's issuer must equal the token's iss" + claimText(c, "issuer") + " exactly, trailing slash included"
	}},
	700212: {ErrAssertionAudience, func(c *tokens.Claims) string {
		return "the federated identity credential's audience must equal the token's aud" + claimText(c, "audience") + "; the projected token's audience should be " + DefaultAudience
	}},
	700213: {ErrAssertionSubject, func(c *tokens.Claims) string {
		return "the federated identity credential's subject must be system:serviceaccount:<namespace>:<name> of the pod's service account" + claimText(c, "subject")
	}},
	7000272: {ErrSigningKeyNotFound, func(*tokens.Claims) string {
		return "the key that signed the token is not in the issuer's JWKS: publish the cluster's current signing key (keep old keys during rotation)"
	}},
	90061: {ErrIssuerUnreachable, func(c *tokens.Claims) string {
		return "Entra ID must reach <issuer>/.well-known/openid-configuration and the jwks_uri over the internet" + claimText(c, "issuer")
	}},
}

func claimsText(c *tokens.Claims) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf(" (iss %q, sub %q, aud %q)", c.Issuer, c.Subject, c.Audience)
}

func claimText(c *tokens.Claims, which string) string {
	if c == nil {
		return ""
	}
	switch which {
	case "issuer":
		return fmt.Sprintf(" (%q)", c.Issuer)
	case "audience":
		return fmt.Sprintf(" (%q)", c.Audience)
	default:
		return fmt.Sprintf(" (%q)", c.Subject)
	}
}

// entraBody is the error answer of Entra's token endpoint.
type entraBody struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
	Codes       []int  `json:"error_codes"`
}

// classifyEntra reads the AADSTS code of a refused token request; nil when
// the error carries no Entra answer.
func classifyEntra(err *azidentity.AuthenticationFailedError, claims *tokens.Claims) *EntraError {
	var body entraBody
	if err.RawResponse != nil {
		if payload, perr := runtime.Payload(err.RawResponse); perr == nil {
			_ = json.Unmarshal(payload, &body)
		}
	}
	code := 0
	if len(body.Codes) > 0 {
		code = body.Codes[0]
	}
	text := body.Description
	if text == "" {
		text = err.Error()
	}
	if code == 0 {
		if m := aadstsCode.FindStringSubmatch(text); m != nil {
			code, _ = strconv.Atoi(m[1])
		}
	}
	if code == 0 && body.Error == "" {
		return nil
	}
	e := &EntraError{Code: code, Description: strings.TrimSpace(text), Err: err}
	if known, ok := entraCodes[code]; ok {
		e.Sentinel, e.Fix = known.sentinel, known.fix(claims)
	}
	return e
}
