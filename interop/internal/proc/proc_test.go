package proc

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTailFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(p, []byte("1\n2\n3\n4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := TailFile(p, 2); got != "3\n4\n" {
		t.Errorf("TailFile = %q, want %q", got, "3\n4\n")
	}
	if got := TailFile(p, 10); got != "1\n2\n3\n4\n" {
		t.Errorf("TailFile = %q, want the whole file", got)
	}
}
