package cli

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/clitest"
)

// fuzzInput runs the command with input on standard input: whatever the
// input, it never panics and exits 0 (read) or 1 (refused), never with a
// usage error, and its text output and errors are safe on a terminal.
func fuzzInput(t *testing.T, input string, args ...string) {
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(input), &out, &errOut)
	if code != 0 && code != 1 {
		t.Fatalf("ksa %s: exit %d for input %q", strings.Join(args, " "), code, input)
	}
	clitest.AssertTerminalSafe(t, errOut.String())
	if !slices.Contains(args, "json") {
		clitest.AssertTerminalSafe(t, out.String())
	}
}

// FuzzTokenInspect feeds arbitrary tokens to ksa token inspect, in text and
// JSON.
func FuzzTokenInspect(f *testing.F) {
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJodHRwczovL2lzc3VlciIsInN1YiI6InN5c3RlbTpzZXJ2aWNlYWNjb3VudDpwcm9kOmJpbGxpbmciLCJhdWQiOlsidmF1bHQiXSwiZXhwIjoxNzAwMDAzNjAwLCJpYXQiOjE3MDAwMDAwMDAsIm5iZiI6MTcwMDAwMDAwMH0.c2ln")
	f.Add("Bearer a.b.c")
	f.Add("e30.e30.")
	f.Add("")
	f.Add("eyJhbGciOiJub25lIn0.eyJrdWJlcm5ldGVzLmlvIjp7InBvZCI6bnVsbH19.")
	// kid, iss and aud holding ESC, CR and U+202E.
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6Ilx1MDAxYlsySiJ9.eyJpc3MiOiJhXHJzdGF0ZTogVkVSSUZJRUQiLCJhdWQiOlsi4oCuIl0sImV4cCI6MTcwMDAwMzYwMH0.c2ln")
	f.Fuzz(func(t *testing.T, token string) {
		fuzzInput(t, token, "token", "inspect", "-", "--now", "2023-11-14T22:13:20Z")
		fuzzInput(t, token, "token", "inspect", "-", "-o", "json", "--now", "2023-11-14T22:13:20Z")
	})
}

// FuzzX509Inspect feeds arbitrary PEM to ksa x509 inspect.
func FuzzX509Inspect(f *testing.F) {
	if cert, err := os.ReadFile("../../testdata/x509/cart.crt"); err == nil {
		f.Add(string(cert))
	}
	if csr, err := os.ReadFile("../../testdata/x509/cart.csr"); err == nil {
		f.Add(string(csr))
	}
	f.Add("kind: CertificateSigningRequest\nspec:\n  request: LS0t\n")
	f.Add("-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n")
	f.Add("not PEM")
	f.Fuzz(func(t *testing.T, pem string) {
		fuzzInput(t, pem, "x509", "inspect", "-")
	})
}

// FuzzCredspecFromFile feeds arbitrary files to ksa credspec generate
// --from-file: whatever they hold, the error is short and never quotes a
// long run of the input.
func FuzzCredspecFromFile(f *testing.F) {
	if spec, err := os.ReadFile("../../../../credspec/testdata/webapp01.json"); err == nil {
		f.Add(string(spec))
	}
	f.Add(`{}`)
	f.Add(`{"CmsPlugins":["ActiveDirectory"],"CmsPlugins":[]}`)
	f.Add(`{"DomainJoinConfig":{"Sid":"a","sid":"b"}}`)
	f.Add(`[1,2]`)
	f.Add(`{"a":` + strings.Repeat("[", 100))
	f.Add("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")
	f.Fuzz(func(t *testing.T, input string) {
		var out, errOut bytes.Buffer
		code := Main([]string{"credspec", "generate", "--from-file", "-"}, strings.NewReader(input), &out, &errOut)
		if code != 0 && code != 1 {
			t.Fatalf("exit %d for %q", code, input)
		}
		clitest.AssertTerminalSafe(t, errOut.String())
		if len(errOut.String()) > 600 {
			t.Fatalf("an error of %d bytes: %q", errOut.Len(), errOut.String())
		}
	})
}
