package main

import (
	"bytes"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/keystoretest"
	"github.com/ksa-go/ksa/oidc"
)

var update = flag.Bool("update", false, "rewrite the expected outputs in testdata/script")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"ksa": func() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the workflows in testdata/script as a user would type
// them. Each script starts in a directory holding keys/ (fixed keys from
// testdata/keys) and x509/ (a fixed certificate); the serve command
// hosts a directory over https on loopback.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("GORACE", raceOptions())
			env.Values[kubeletKey{}] = &kubeletSigner{}
			for _, dir := range []string{"keys", "x509"} {
				if err := copyDir(filepath.Join("testdata", dir), filepath.Join(env.WorkDir, dir)); err != nil {
					return err
				}
			}
			return nil
		},
		Condition: keyStoreCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"softhsm":    cmdSoftHSM,
			"localkms":   cmdLocalKMS,
			"serve":      cmdServe,
			"kubelet":    cmdKubelet,
			"svid":       cmdSVID,
			"cmpdoc":     cmdCmpDoc,
			"runprinted": cmdRunPrinted,
			"example":    cmdExample,
			"setkid":     cmdSetKID,
			"expand":     cmdExpand,
			"envfile":    cmdEnvFile,
			"hardlink": func(ts *testscript.TestScript, neg bool, args []string) {
				// hardlink OLD NEW gives a file a second name.
				if neg || len(args) != 2 {
					ts.Fatalf("usage: hardlink OLD NEW")
				}
				ts.Check(os.Link(ts.MkAbs(args[0]), ts.MkAbs(args[1])))
			},
			"bigfile": func(ts *testscript.TestScript, neg bool, args []string) {
				// bigfile NAME BYTES writes a file of that many 'a's.
				n, err := strconv.Atoi(args[1])
				ts.Check(err)
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), bytes.Repeat([]byte("a"), n), 0o644))
			},
		},
	})
}

// raceOptions are the race detector's options for the ksa commands the
// scripts run, which are this test binary: built with -race, each would
// sleep a second before it exits (atexit_sleep_ms, for goroutines to
// report races), hundreds of seconds over the scripts; a race still fails
// the command. GORACE's own options follow and win.
func raceOptions() string {
	return strings.TrimSpace("atexit_sleep_ms=0 " + os.Getenv("GORACE"))
}

// keyStoreCondition answers [softhsm] and [localkms]: whether the key
// store is installed, or must be (CI=1: the command then fails saying how
// to install it, rather than the script skipping).
func keyStoreCondition(cond string) (bool, error) {
	ci := os.Getenv("CI") != ""
	switch cond {
	case "softhsm":
		_, err := exec.LookPath("softhsm2-util")
		return err == nil || ci, nil
	case "localkms":
		dir, err := os.MkdirTemp("", "ksa-localkms-probe-")
		if err != nil {
			return false, err
		}
		defer os.RemoveAll(dir)
		k, err := keystoretest.NewLocalKMS(dir)
		if err == nil {
			k.Close()
		}
		return err == nil || ci, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// cmdSoftHSM makes a SoftHSM2 token of the script's own:
//
//	softhsm VAR
//
// sets SOFTHSM2_CONF for the commands that follow, $VAR to the reference
// of the token without a key (pkcs11:module-path=...;token=ksa), $VAR_PIN
// to the PIN file and $VAR_MODULE to the module's path.
func cmdSoftHSM(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: softhsm VAR")
	}
	hsm, err := keystoretest.NewSoftHSM(ts.MkAbs("softhsm"))
	ts.Check(err)
	ts.Setenv("SOFTHSM2_CONF", hsm.Conf)
	ts.Setenv(args[0], "pkcs11:module-path="+hsm.Module+";token="+hsm.Token)
	ts.Setenv(args[0]+"_PIN", hsm.PINFile)
	ts.Setenv(args[0]+"_MODULE", hsm.Module)
}

// cmdLocalKMS starts local-kms, as AWS KMS, until the script ends:
//
//	localkms
//
// and sets the AWS SDK's environment (endpoint, region, credentials) for
// the commands that follow.
func cmdLocalKMS(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: localkms")
	}
	k, err := keystoretest.NewLocalKMS(ts.MkAbs("localkms"))
	ts.Check(err)
	ts.Defer(k.Close)
	for _, kv := range k.Env() {
		name, value, _ := strings.Cut(kv, "=")
		ts.Setenv(name, value)
	}
}

// cmdServe hosts a directory over https on loopback, as blob storage
// would, until the script ends:
//
//	serve [-octet-stream] [-no-cache-control] [-forbidden] VAR DIR
//
// It sets $VAR to the server's https URL and writes the server's CA
// certificate to $WORK/VAR-ca.pem. Discovery documents are served as
// application/json and key sets as application/jwk-set+json with
// Cache-Control: public, max-age=3600, unless the flags break that.
func cmdServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! serve")
	}
	opts := map[string]bool{}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		opts[args[0]] = true
		args = args[1:]
	}
	if len(args) != 2 {
		ts.Fatalf("usage: serve [-octet-stream] [-no-cache-control] [-forbidden] VAR DIR")
	}
	dir := ts.MkAbs(args[1])
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opts["-forbidden"] {
			http.Error(w, "public access is not permitted on this storage account", http.StatusForbidden)
			return
		}
		switch {
		case opts["-octet-stream"]:
			w.Header().Set("Content-Type", "application/octet-stream")
		case strings.HasSuffix(r.URL.Path, oidc.DiscoveryPath):
			w.Header().Set("Content-Type", oidc.DiscoveryContentType)
		case strings.HasSuffix(r.URL.Path, oidc.JWKSPath), strings.HasSuffix(r.URL.Path, ".json"):
			w.Header().Set("Content-Type", oidc.JWKSContentType)
		}
		if !opts["-no-cache-control"] {
			w.Header().Set("Cache-Control", "public, max-age=3600")
		}
		files.ServeHTTP(w, r)
	}))
	ts.Defer(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	ts.Check(os.WriteFile(ts.MkAbs(args[0]+"-ca.pem"), ca, 0o644))
	ts.Setenv(args[0], srv.URL)
}

// runprinted runs the command the previous command printed for the user
// to run, as the user would paste it into a shell:
//
//	runprinted stdout|stderr REGEXP
//
// The first line of the previous command's output matching REGEXP holds
// the command: its first subexpression, or the whole match. It must start
// with "ksa "; it runs under sh -c, with ksa on $PATH. A usage error (exit
// status 2) fails the script even under "!": the printed command is wrong.
func cmdRunPrinted(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || (args[0] != "stdout" && args[0] != "stderr") {
		ts.Fatalf("usage: runprinted stdout|stderr REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	m := re.FindStringSubmatch(ts.ReadFile(args[0]))
	if m == nil {
		ts.Fatalf("no line of %s matches %s", args[0], args[1])
	}
	line := m[0]
	if len(m) > 1 {
		line = m[1]
	}
	runLine(ts, neg, line)
}

// example runs one example of a command's help, as printed:
//
//	example N COMMAND...
//
// runs the Nth (from 1) example command under "Examples:" of
// "ksa COMMAND... --help", its continuation lines joined, under sh -c.
func cmdExample(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: example N COMMAND...")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	ts.Check(ts.Exec("ksa", append(args[1:], "--help")...))
	cmds := helpExamples(ts.ReadFile("stdout"))
	if n < 1 || n > len(cmds) {
		ts.Fatalf("ksa %s has %d examples", strings.Join(args[1:], " "), len(cmds))
	}
	runLine(ts, neg, cmds[n-1])
}

// helpExamples returns the example commands of a help text: the lines
// under "Examples:" that are not comments, with their continuation lines.
func helpExamples(help string) []string {
	_, ex, ok := strings.Cut(help, "\nExamples:\n")
	if !ok {
		return nil
	}
	var out []string
	cur := ""
	for _, line := range strings.Split(ex, "\n") {
		t := strings.TrimSpace(line)
		if cur == "" && (t == "" || strings.HasPrefix(t, "#")) {
			if t == "" && len(out) > 0 {
				break
			}
			continue
		}
		if c, ok := strings.CutSuffix(t, "\\"); ok {
			cur += c
			continue
		}
		out = append(out, cur+t)
		cur = ""
	}
	return out
}

// runLine runs a printed ksa command line under sh -c.
func runLine(ts *testscript.TestScript, neg bool, line string) {
	if !strings.HasPrefix(line, "ksa ") && !strings.Contains(line, "| ksa ") {
		ts.Fatalf("%q is not a ksa command", line)
	}
	ts.Logf("running %s", line)
	err := ts.Exec("sh", "-c", line)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 2 {
		ts.Fatalf("%q is a usage error: %s", line, ts.ReadFile("stderr"))
	}
	switch {
	case err != nil && !neg:
		ts.Fatalf("%q: %v\n%s", line, err, ts.ReadFile("stderr"))
	case err == nil && neg:
		ts.Fatalf("%q: unexpected success", line)
	}
}

// cmpdoc compares a rendered document, which like kube-apiserver's has no
// final newline, with an expected file of the archive, which has one:
//
//	cmpdoc FILE WANT
func cmdCmpDoc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpdoc FILE WANT")
	}
	got, want := ts.ReadFile(args[0]), ts.ReadFile(args[1])
	if strings.HasSuffix(got, "\n") {
		ts.Fatalf("%s ends with a newline; kube-apiserver's documents do not", args[0])
	}
	if got+"\n" != want {
		ts.Fatalf("%s differs from %s:\n got: %s\nwant: %s", args[0], args[1], got, want)
	}
}

// copyDir copies the regular files of one directory into another.
func copyDir(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		perm := os.FileMode(0o644)
		if strings.HasSuffix(e.Name(), ".key") {
			perm = 0o600
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, perm); err != nil {
			return err
		}
	}
	return nil
}

// cmdSetKID sets a variable to the key ID of a key file's public key:
//
//	setkid VAR FILE
//
// for scripts whose outputs name a key generated during the script.
func cmdSetKID(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: setkid VAR FILE")
	}
	pubs, err := keystore.LoadPublicKeysFile(ts.MkAbs(args[1]))
	ts.Check(err)
	if len(pubs) != 1 {
		ts.Fatalf("%s holds %d keys, not one", args[1], len(pubs))
	}
	kid, err := jwks.KeyID(pubs[0])
	ts.Check(err)
	ts.Setenv(args[0], kid)
}

// cmdExpand writes a file with the script's variables expanded:
//
//	expand IN OUT
//
// for files that name paths or references known only when the script runs.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expand IN OUT")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(os.Expand(ts.ReadFile(args[0]), ts.Getenv)), 0o644))
}

// envfile sets $NAME to the content of FILE, without its trailing newline:
//
//	envfile NAME FILE
//
// for values a command wrote that a later file must hold (expand).
func cmdEnvFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfile NAME FILE")
	}
	ts.Setenv(args[0], strings.TrimRight(ts.ReadFile(args[1]), "\n"))
}
