package register

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/ksa-go/ksa"
)

// The clouds' limits and defaults.
const (
	// EntraMaxCredentials is how many federated identity credentials one
	// Entra ID application or managed identity holds.
	EntraMaxCredentials = 20
	// AWSTrustPolicyChars is IAM's default quota on a role's trust
	// policy, in characters (it can be raised to 4096).
	AWSTrustPolicyChars = 2048
	// GoogleMaxSubject bounds google.subject, the token's sub mapped by
	// the provider, in bytes.
	GoogleMaxSubject = 127
	// EntraAudience is the audience Entra ID documents for federated
	// credentials, AzureConfig.Audience's default.
	EntraAudience = "api://AzureADTokenExchange"
	// AWSAudience is the audience IRSA's tokens carry, AWSConfig.Audience's
	// default.
	AWSAudience = "sts.amazonaws.com"
)

// Registration is what registers service accounts with one cloud.
type Registration struct {
	// Cloud is "azure", "aws" or "gcp".
	Cloud string
	// Issuer is the issuer registered, as the configuration gave it.
	Issuer string
	// Commands are the commands of the cloud's CLI that register it, in
	// order, each an argument vector ("az", "identity", ...).
	Commands [][]string
	// Requests are the REST requests the commands send, in order.
	Requests []Request
	// Notes say what the cloud limits, and what to do next.
	Notes []string
}

// Request is one REST request of a registration.
type Request struct {
	// Method and URL are the request's; both empty for a document that
	// is sent later by a request of the caller's choice (AWS's trust
	// policy, when no role is named).
	Method, URL string
	// Body is the request's JSON body, a tree of maps, slices and
	// strings: json.Marshal writes it as the cloud expects it.
	Body any
}

// check refuses an issuer, service accounts or an audience the clouds
// refuse; typ names the configuration in errors.
func check(typ, issuer string, sas []ksa.ServiceAccount, audience string, audienceRequired bool) error {
	u, err := url.Parse(issuer)
	switch {
	case !strings.HasPrefix(issuer, "https://") || err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return configError(typ+".Issuer", "is not an https URL without query, fragment or user information", nil)
	case len(sas) == 0:
		return configError(typ+".ServiceAccounts", "is empty", nil)
	case strings.TrimSpace(audience) != audience || strings.ContainsAny(audience, " \t\r\n") || (audienceRequired && audience == ""):
		return configError(typ+".Audience", fmt.Sprintf("%q is not an audience: a non-empty string without spaces", audience), nil)
	}
	seen := map[string]bool{}
	for i, sa := range sas {
		if err := ksa.CheckNamespace("namespace", sa.Namespace); err != nil {
			return configError(fmt.Sprintf("%s.ServiceAccounts[%d]", typ, i), "is not a service account", err)
		}
		if err := ksa.CheckObjectName("name", sa.Name); err != nil {
			return configError(fmt.Sprintf("%s.ServiceAccounts[%d]", typ, i), "is not a service account", err)
		}
		if seen[sa.Username()] {
			return configError(fmt.Sprintf("%s.ServiceAccounts[%d]", typ, i), sa.Username()+" is given twice", nil)
		}
		seen[sa.Username()] = true
	}
	return nil
}

// configError is a configuration the package refuses.
func configError(field, reason string, err error) error {
	return &ksa.ConfigError{Field: "register." + field, Reason: reason, Err: err}
}

// compactJSON writes v as one line of JSON, HTML characters unescaped, as
// the clouds' CLIs take a document in an argument.
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // maps of strings always encode
	return strings.TrimSuffix(buf.String(), "\n")
}

// ficNameBad are the characters a federated credential's name may not
// hold.
var ficNameBad = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ficName names a service account's federated credential: NAMESPACE-NAME,
// the characters Entra ID refuses made hyphens, at most 120 characters.
func ficName(sa ksa.ServiceAccount) string {
	n := ficNameBad.ReplaceAllString(sa.Namespace+"-"+sa.Name, "-")
	return n[:min(len(n), 120)]
}
