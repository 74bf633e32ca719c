// Command image builds the ksa command's container image (package
// interop/ksaimage) and writes it as an OCI image layout in a tar
// archive, for `ctr -n k8s.io images import`:
//
//	(cd interop && go run ./ci/image -o ../bin/ksa.oci.tar)
//
// It builds the commit -rev (HEAD by default; uncommitted changes are left
// out) and prints the image's name, digest and sizes. Built twice from
// the same commit with the same Go toolchain, the archive is the same,
// byte for byte.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/ksa-go/ksa/interop/ksaimage"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	out := fs.String("o", "", "the archive to write (required), such as ../bin/ksa.oci.tar")
	name := fs.String("name", "", "the image's name; default "+ksaimage.Repository+":COMMIT (12 hex digits)")
	rev := fs.String("rev", "HEAD", "the commit to build (uncommitted changes are left out)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: go run ./ci/image -o FILE [-rev COMMIT] [-name REGISTRY/NAME:TAG]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := ksaimage.Build(ctx, ksaimage.Config{Name: *name, Revision: *rev})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".ksa-image-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = res.Image.WriteOCI(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "image:    %s\ndigest:   %s\nrevision: %s\nbinary:   %d bytes\narchive:  %s, %d bytes\n",
		res.Image.Name, res.Digest, res.Revision, res.BinarySize, *out, st.Size())
	return nil
}
