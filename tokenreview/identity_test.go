package tokenreview_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/tokenreview"
)

func TestIdentityOfIsUserInfosInverse(t *testing.T) {
	ids := []ksa.Identity{
		{ServiceAccount: sa},
		{ServiceAccount: sa, Pod: ksa.ObjectRef{Name: "p", UID: "pu"}, Node: ksa.ObjectRef{Name: "n", UID: "nu"}, CredentialID: "JTI=abc"},
		{ServiceAccount: sa, Node: ksa.ObjectRef{Name: "n"}},
	}
	for _, id := range ids {
		got, err := tokenreview.IdentityOf(id.UserInfo())
		require.NoError(t, err)
		assert.Equal(t, id, got)
	}
}
