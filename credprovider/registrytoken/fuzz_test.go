package registrytoken_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credprovider/registrytoken"
)

// FuzzParseScope: a scope parses or is refused with ErrBadRequest, never
// panics, and what parses writes back to a scope that parses the same.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{
		"repository:team/app:pull", "repository:a:pull,push,pull", "repository(plugin):a/b:pull",
		"registry:catalog:*", "repository:a.b/c__d/e---f:pull", "repository::pull", "repository:a:",
		"repository(x:a:pull", "repository:reg:5000/app:pull", "repository:a___b:*,pull",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := registrytoken.ParseScope(s)
		if err != nil {
			require.ErrorIs(t, err, registrytoken.ErrBadRequest)
			return
		}
		again, err := registrytoken.ParseScope(sc.String())
		require.NoError(t, err)
		require.Equal(t, sc, again)
	})
}

// FuzzReadRequest: a query is read or refused with a sentinel, never
// panics.
func FuzzReadRequest(f *testing.F) {
	for _, s := range []string{"service=r&scope=repository:a:pull", "service=r", "scope=x", "service=%zz", "service=r&scope=a:b:c+d:e:f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		req, err := registrytoken.ReadRequest(q)
		if err != nil {
			require.True(t, registrytoken.StatusFor(err) == 400, err.Error())
			return
		}
		require.LessOrEqual(t, len(req.Scopes), registrytoken.MaxScopes)
	})
}
