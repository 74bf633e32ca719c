package stores

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/publish"
)

func TestNotBuiltNamesTheTag(t *testing.T) {
	_, err := notBuilt("ksa_nos3")(context.Background(), publish.Location{Kind: publish.S3, Raw: "s3://b"}, publish.Config{})
	assert.ErrorIs(t, err, publish.ErrNoOpener)
	var pe *publish.Error
	assert.ErrorAs(t, err, &pe)
	assert.Equal(t, "this ksa was built without s3 support (-tags ksa_nos3)", pe.What)
	assert.Len(t, Openers(), 3)
}
