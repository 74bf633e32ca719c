// Command ksarp is a minimal relying party on ksa: it discovers an issuer,
// verifies the token on standard input for an audience, and prints the
// service account. TestRelyingPartyBinarySize builds it beside gooidcrp,
// the same program on go-oidc, and compares the two binaries.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ksa-go/ksa/oidc"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: ksarp ISSUER AUDIENCE < token")
		os.Exit(2)
	}
	ctx := context.Background()
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{Issuers: []string{os.Args[1]}, Audiences: []string{os.Args[2]}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	raw, err := io.ReadAll(io.LimitReader(os.Stdin, 64<<10))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	res, err := v.Verify(ctx, strings.TrimSpace(string(raw)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(res.Claims.Subject)
}
