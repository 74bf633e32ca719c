package base

import (
	"fmt"

	"github.com/spf13/cobra"
)

// OnlyWith refuses a flag given without what it applies with (ok false):
// a flag that would be ignored is a usage error, not a silent no-op.
func OnlyWith(cmd *cobra.Command, flag string, ok bool, what string) error {
	if ok || !cmd.Flags().Changed(flag) {
		return nil
	}
	return Usage(fmt.Sprintf("add %s, or leave out --%s", what, flag), "--%s applies only with %s", flag, what)
}

// OnlyWithout refuses a flag given together with another that makes it
// pointless.
func OnlyWithout(cmd *cobra.Command, flag, other string) error {
	if !cmd.Flags().Changed(flag) || !cmd.Flags().Changed(other) {
		return nil
	}
	return Usage(fmt.Sprintf("leave out --%s or --%s", flag, other), "--%s applies only without --%s", flag, other)
}

// FirstError returns the first non-nil error.
func FirstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
