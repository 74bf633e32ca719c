package base

import (
	"strings"

	"github.com/ksa-go/ksa/publish"
)

// CheckIssuerURL refuses an issuer Kubernetes and the clouds refuse, with the fix.
func CheckIssuerURL(issuer string) error {
	if !strings.HasPrefix(issuer, "https://") {
		return Fail(nil, "use an https:// issuer URL (Kubernetes and every cloud refuse http), e.g. https://oidc.example.com/cluster-1", "issuer %q is not https", publish.RedactURL(issuer))
	}
	return nil
}
