package node_test

import (
	"os"
	"testing"

	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/interop/node"
)

// cluster is the package's control plane and node, shared by its tests.
var cluster node.Shared

func TestMain(m *testing.M) {
	os.Exit(cluster.Run(m, controlplane.Config{}, node.Config{}))
}
