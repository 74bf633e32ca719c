package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuickstart(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), &out))
	assert.Contains(t, out.String(), "username: system:serviceaccount:payments:billing")
	assert.Contains(t, out.String(), "extra:    authentication.kubernetes.io/pod-name=billing-7d4f8b9c6-x2x4z")
	assert.Contains(t, out.String(), "a token for another audience is refused: tokens: token audiences")
	assert.Contains(t, out.String(), "4. exchanged the projected token for an Entra ID access token")
}
