package federation

import (
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// sendCheck is a per-retry pipeline policy: right before each attempt
// leaves (azcore re-sends the same assertion on 429 and 5xx, with delays of
// up to a minute), it checks that the client assertion in the form still
// has the minimum time left. So a token that was fresh at the first try is
// not sent expired on a retry.
type sendCheck struct{ c *AzureCredential }

func (p sendCheck) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	if raw.Method != http.MethodPost || req.Body() == nil ||
		!strings.HasPrefix(raw.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return req.Next()
	}
	body, err := io.ReadAll(req.Body())
	if rerr := req.RewindBody(); err != nil || rerr != nil {
		return req.Next()
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return req.Next()
	}
	assertion := form.Get("client_assertion")
	if assertion == "" {
		return req.Next()
	}
	claims, err := readAssertion(assertion)
	if err == nil {
		err = p.c.checkExpiry(claims)
	}
	if err != nil {
		if st, ok := raw.Context().Value(callStateKey{}).(*callState); ok {
			st.err = err
		}
		return nil, err
	}
	return req.Next()
}
