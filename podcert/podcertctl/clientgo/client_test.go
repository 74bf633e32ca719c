package clientgo_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert/podcertctl"
	"github.com/ksa-go/ksa/podcert/podcertctl/clientgo"
)

var _ podcertctl.Client = (*clientgo.Client)(nil)

func TestNewRefusesNil(t *testing.T) {
	_, err := clientgo.New(nil)
	var ce *ksa.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "clientgo.New", ce.Field)
	assert.EqualError(t, err, "clientgo: New has a nil clientset")
}

// The watch-list semantics are the clientset's: a fake cannot stream an
// informer's initial list, a real clientset can.
func TestWatchListSemantics(t *testing.T) {
	c, err := clientgo.New(fake.NewClientset())
	require.NoError(t, err)
	assert.True(t, c.IsWatchListSemanticsUnSupported())

	real, err := kubernetes.NewForConfig(&rest.Config{Host: "https://127.0.0.1:6443"})
	require.NoError(t, err)
	c, err = clientgo.New(real)
	require.NoError(t, err)
	assert.False(t, c.IsWatchListSemanticsUnSupported())
}
