package x509sa_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/x509sa"
)

func TestUsageString(t *testing.T) {
	assert.Equal(t, "none", x509sa.Usage(0).String())
	assert.Equal(t, "client", x509sa.ClientAuth.String())
	assert.Equal(t, "server", x509sa.ServerAuth.String())
	assert.Equal(t, "client+server", x509sa.ClientAndServerAuth.String())
	assert.Equal(t, "invalid", x509sa.Usage(4).String())
}
