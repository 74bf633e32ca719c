package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runAsProgram is the environment variable that makes the test binary
// run main instead of the tests, so that a test sees main's exit status.
const runAsProgram = "GMSA_WEBHOOK_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsProgram) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestExitStatus runs the program as a user does: 0 for -h and --help
// (after the usage, on stderr), 2 for a usage error (a flag it does not
// have, a flag without its partner, an argument it takes none of), the
// error said once.
func TestExitStatus(t *testing.T) {
	for _, tt := range []struct {
		name   string
		args   []string
		status int
		stderr string
	}{
		{name: "h", args: []string{"-h"}, status: 0, stderr: "Usage of gmsa-webhook:"},
		{name: "help", args: []string{"--help"}, status: 0, stderr: "Usage of gmsa-webhook:"},
		{name: "unknown flag", args: []string{"-nope"}, status: 2, stderr: "flag provided but not defined: -nope"},
		{name: "cert without key", args: []string{"-tls-cert-file", "x"}, status: 2, stderr: "-tls-cert-file and -tls-key-file go together"},
		{name: "bad allow", args: []string{"-allow", "nobody"}, status: 2, stderr: "want user=name[,name...]"},
		{name: "argument", args: []string{"serve"}, status: 2, stderr: `takes no arguments, got "serve"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A program that serves instead of stopping is killed after a
			// minute (a guard, not a measure).
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-addr", "127.0.0.1:0"}, tt.args...)...)
			cmd.Env = append(os.Environ(), runAsProgram+"=1")
			out, err := cmd.CombinedOutput()
			status := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				status = exit.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.status, status, "%s", out)
			assert.Equal(t, 1, strings.Count(string(out), tt.stderr), "said once:\n%s", out)
		})
	}
}
