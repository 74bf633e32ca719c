package credspeccmd

import (
	"errors"
	"strings"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/credspec"
)

// specFix is the advice for a credential-spec file that cannot be used.
const specFix = "pass the credential-spec JSON file New-CredentialSpec wrote, unchanged"

// parseSpecFile reads a credential-spec JSON file with the library's
// strict reader (one JSON object, no member twice, the schema's members
// only, every member New-CredentialSpec writes); its errors quote no input
// but a member's name, so a token or a 60 KB line given by mistake stays
// out of them.
func parseSpecFile(name string, data []byte) (*credspec.CredentialSpec, error) {
	spec, err := credspec.ParseCredentialSpec(data)
	if err == nil {
		return spec, nil
	}
	reason := ksa.ErrorText(err)
	var se *credspec.SchemaError
	if errors.As(err, &se) {
		reason = "the member " + base.Quoted(strings.TrimPrefix(se.Path, credspec.ContentsField+".")) + " " + se.Reason
	}
	return nil, base.Fail(nil, specFix, "%s is not a credential spec: %s", base.InputName(name), base.BoundReason(reason))
}
