package providerconfig_test

import (
	"errors"
	"testing"

	"github.com/ksa-go/ksa/credprovider/providerconfig"
)

// FuzzParse: any input parses or is refused with ErrMalformedConfig, and
// Lint runs on whatever parses.
func FuzzParse(f *testing.F) {
	data, _ := ksaProvider(nil).Marshal()
	f.Add(data)
	f.Add([]byte(`{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"name":"a","matchImages":["*"],"tokenAttributes":{}}]}`))
	f.Add([]byte(`{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"name":"a","name":"b"}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := providerconfig.Parse(data)
		if err != nil {
			if !errors.Is(err, providerconfig.ErrMalformedConfig) {
				t.Fatalf("error matches no sentinel: %v", err)
			}
			return
		}
		_ = providerconfig.Lint(cfg, providerconfig.LintOptions{GrantedAudiences: []string{}})
	})
}
