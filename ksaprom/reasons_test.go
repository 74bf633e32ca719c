package ksaprom_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/ksaprom"
	"github.com/ksa-go/ksa/tokens"
)

func TestReasonName(t *testing.T) {
	assert.Equal(t, "", ksaprom.ReasonName(nil))
	assert.Equal(t, "expired", ksaprom.ReasonName(fmt.Errorf("wrapped: %w", tokens.ErrExpired)))
	assert.Equal(t, "no_keys", ksaprom.ReasonName(jwks.ErrNoKeys))
	assert.Equal(t, "other", ksaprom.ReasonName(errors.New("something else")))
}
