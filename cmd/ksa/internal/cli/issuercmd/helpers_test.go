package issuercmd

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/clitest"
)

// runKSA runs the issuer group under a root of its own in dir and
// returns its exit status and output.
func runKSA(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return clitest.Run(t, dir, func(a *base.App) *cobra.Command { return New(a, nil) }, args...)
}
