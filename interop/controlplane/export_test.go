package controlplane

import "testing"

// SetBinDir makes dir stand for the interop module's bin/ directory until
// t ends.
func SetBinDir(t testing.TB, dir string) {
	old := binDir
	binDir = dir
	t.Cleanup(func() { binDir = old })
}
