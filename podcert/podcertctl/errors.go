package podcertctl

import (
	"fmt"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the messages of the package's errors.
const prefix = "podcertctl"

// wrap returns an error of the package reading "podcertctl: <msg>:
// <cause>", wrapping cause.
func wrap(cause error, format string, args ...any) error {
	return errs.Wrap(prefix, nil, fmt.Sprintf(format, args...), cause)
}

func configError(field, reason string) error {
	return &ksa.ConfigError{Field: "podcertctl.Config." + field, Reason: reason}
}
