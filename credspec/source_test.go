package credspec_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credspec"
)

func TestStaticSource(t *testing.T) {
	src, err := credspec.NewStaticSource(credspec.NewGMSACredentialSpec("b", fullSpec()), credspec.NewGMSACredentialSpec("a", &credspec.CredentialSpec{}))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, src.Names())
	got, err := src.Contents(t.Context(), "a")
	require.NoError(t, err)
	assert.Equal(t, "{}", got)
	_, err = src.Contents(t.Context(), "missing")
	assert.Contains(t, err.Error(), `"missing"`, "the error names the object")
	assert.ErrorIs(t, err, credspec.ErrNotFound)

	for name, objs := range map[string][]*credspec.GMSACredentialSpec{
		"nil":         {nil},
		"no_credspec": {credspec.NewGMSACredentialSpec("a", nil)},
		"duplicate":   {credspec.NewGMSACredentialSpec("a", fullSpec()), credspec.NewGMSACredentialSpec("a", fullSpec())},
		"bad_name":    {credspec.NewGMSACredentialSpec("A", fullSpec())},
	} {
		_, err := credspec.NewStaticSource(objs...)
		assert.ErrorIs(t, err, credspec.ErrInvalidSpec, name)
	}
	for name, m := range map[string]map[string]string{
		"not_json": {"a": "x"},
		"null":     {"a": "null"},
		"too_big":  {"a": `{"a":"` + strings.Repeat("x", credspec.MaxSize) + `"}`},
	} {
		_, err := credspec.NewStaticSourceJSON(m)
		assert.ErrorIs(t, err, credspec.ErrInvalidSpec, name)
	}
	src, err = credspec.NewStaticSourceJSON(map[string]string{"a": `{ "b": 1, "a": 2 }`})
	require.NoError(t, err)
	got, err = src.Contents(t.Context(), "a")
	require.NoError(t, err)
	assert.Equal(t, `{"a":2,"b":1}`, got)
}
