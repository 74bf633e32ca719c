// Command gooidcrp is ksarp written on go-oidc, for the size comparison.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gooidcrp ISSUER AUDIENCE < token")
		os.Exit(2)
	}
	ctx := context.Background()
	provider, err := oidc.NewProvider(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	raw, err := io.ReadAll(io.LimitReader(os.Stdin, 64<<10))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tok, err := provider.Verifier(&oidc.Config{ClientID: os.Args[2]}).Verify(ctx, strings.TrimSpace(string(raw)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(tok.Subject)
}
