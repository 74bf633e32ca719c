package registrytoken_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credprovider/registrytoken"
)

// BenchmarkServeHTTP is one pull's token request: the Basic credential
// read, the service-account token verified (ES256), the rules applied and
// a registry token signed (ES256).
func BenchmarkServeHTTP(b *testing.B) {
	c := newCluster(b)
	s, err := registrytoken.New(c.config(b))
	require.NoError(b, err)
	auth := basic("ksa", c.mint(b, "team", "app", "pod", testAudience, time.Hour))
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodGet, "/token?service="+testService+"&scope=repository:team/app:pull", nil)
		r.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
