package cli

import (
	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
)

// versionFlags are the settings of "ksa version".
type versionFlags struct {
	format base.Format
}

func newVersionCmd(a *base.App) *cobra.Command {
	f := &versionFlags{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the command's version and VCS revision",
		Long: `Print the module version of ksa, the version of the ksa library built in,
and the VCS revision, its time and whether the checkout had changes, as the
Go toolchain recorded them. Built from a checkout, whose modules have no
version, it prints the version the library's source declares (ksa.Version,
the last release the checkout follows) and "(devel)": "ksa v0.1.0 (devel)".
The GMSA webhook serves the same as JSON at /info.`,
		Example: `  ksa version
  ksa version -o json`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error {
			v := base.ReadVersion(a.BuildInfo)
			return base.PrintData(a.Stdout, f.format, v, v.Print)
		}),
	}
	base.AddOutputFlag(cmd, &f.format)
	return cmd
}
