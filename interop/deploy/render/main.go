// Command render writes ksa's plain manifests (deploy/manifests) from its
// Helm chart (deploy/charts/ksa). Run it from interop/ after changing the
// chart: go run ./deploy/render
package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/ksa-go/ksa/interop/deploy"
)

func main() {
	written, err := deploy.Write("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
	slices.Sort(written)
	for _, p := range written {
		fmt.Println("wrote", p)
	}
}
