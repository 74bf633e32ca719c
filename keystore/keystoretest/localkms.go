package keystoretest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/skipmark"
)

// LocalKMSInstall is the command that installs local-kms, the AWS KMS
// stand-in the tests use (an independent implementation of the AWS KMS
// API).
const LocalKMSInstall = "go install github.com/nsmithuk/local-kms@v0.0.0-20260228092603-2a5e92d09ab6"

// LocalKMSRegion is the region of the keys local-kms makes, and the
// region LocalKMS.Env sets.
const LocalKMSRegion = "eu-west-2"

// localKMSStartWait bounds how long NewLocalKMS waits for local-kms to say
// it listens.
const localKMSStartWait = 30 * time.Second

// LocalKMS is a running local-kms: keys in memory and in a directory of
// the caller's, its log in a file there. It listens on a port the system
// chose, on every interface (local-kms cannot be told otherwise), and
// accepts any credentials.
type LocalKMS struct {
	// Endpoint is its http:// URL on the loopback address.
	Endpoint string
	// Log is the file its output goes to.
	Log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// localKMSStarted is the line local-kms logs when it listens.
var localKMSStarted = regexp.MustCompile(`Local KMS started on [^ ]*:([0-9]+)`)

// NewLocalKMS starts local-kms, found on PATH or in the go command's bin
// directory ($GOBIN, $GOPATH/bin, ~/go/bin), with its data and log in dir;
// missing, it is an error matching [ErrNotInstalled]. Close stops it.
func NewLocalKMS(dir string) (*LocalKMS, error) {
	bin := findLocalKMS()
	if bin == "" {
		mark := skipmark.Skip{Subject: "local-kms", Missing: []string{"local-kms"}, Install: LocalKMSInstall}
		return nil, notInstalled(mark, "local-kms is not on PATH nor in the go command's bin directory; install it with: "+LocalKMSInstall)
	}
	data := filepath.Join(dir, "kms-data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, errs.Wrap(prefix, nil, "making local-kms's data directory", err)
	}
	k := &LocalKMS{Log: filepath.Join(dir, "local-kms.log"), done: make(chan struct{})}
	logFile, err := os.Create(k.Log)
	if err != nil {
		return nil, errs.Wrap(prefix, nil, "creating local-kms's log", err)
	}
	k.cmd = exec.Command(bin)
	k.cmd.Env = append(os.Environ(), "PORT=0", "KMS_DATA_PATH="+data, "KMS_REGION="+LocalKMSRegion,
		"KMS_SEED_PATH="+filepath.Join(dir, "no-seed.yaml"))
	out, err := k.cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, errs.Wrap(prefix, nil, "starting local-kms", err)
	}
	k.cmd.Stderr = k.cmd.Stdout
	if err := k.cmd.Start(); err != nil {
		logFile.Close()
		return nil, errs.Wrap(prefix, nil, "starting local-kms", err)
	}
	port := make(chan string, 1)
	go func() {
		// Every line goes to the log; the port is read from the first
		// that says it.
		defer close(k.done)
		defer logFile.Close()
		sent := false
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			_, _ = io.WriteString(logFile, line+"\n")
			if m := localKMSStarted.FindStringSubmatch(line); m != nil && !sent {
				port <- m[1]
				sent = true
			}
		}
		if !sent {
			close(port)
		}
		_ = k.cmd.Wait()
	}()
	select {
	case p, ok := <-port:
		if !ok {
			<-k.done
			return nil, errs.Wrap(prefix, nil, "local-kms stopped before it listened; see "+k.Log, nil)
		}
		k.Endpoint = "http://127.0.0.1:" + p
	case <-time.After(localKMSStartWait):
		k.Close()
		return nil, errs.Wrap(prefix, nil, "local-kms did not listen within "+localKMSStartWait.String()+"; see "+k.Log, nil)
	}
	return k, nil
}

// StartLocalKMS starts local-kms for the test, stopped when it ends, and
// sets the environment the AWS SDK reads for the rest of the test (so the
// test cannot be parallel): Env's variables. Without local-kms the test is
// skipped, saying how to install it; with the environment variable CI=1 it
// fails instead.
func StartLocalKMS(t testing.TB) *LocalKMS {
	t.Helper()
	k, err := NewLocalKMS(t.TempDir())
	if err != nil {
		missing(t, err)
	}
	t.Cleanup(k.Close)
	for _, kv := range k.Env() {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	return k
}

// Env returns the environment under which the AWS SDK uses this local-kms:
// its endpoint, the region of its keys, and placeholder credentials (it
// takes any); shared configuration files are not read.
func (k *LocalKMS) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL_KMS=" + k.Endpoint,
		"AWS_REGION=" + LocalKMSRegion,
		"AWS_ACCESS_KEY_ID=AKIAKSATEST",
		"AWS_SECRET_ACCESS_KEY=ksa-test-secret",
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
	}
}

// Close stops local-kms and waits until it has exited.
func (k *LocalKMS) Close() {
	if k.cmd.Process != nil {
		_ = k.cmd.Process.Kill()
	}
	<-k.done
}

// findLocalKMS returns the path of local-kms, or "".
func findLocalKMS() string {
	if p, err := exec.LookPath("local-kms"); err == nil {
		return p
	}
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range filepath.SplitList(os.Getenv("GOPATH")) {
		dirs = append(dirs, filepath.Join(d, "bin"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "local-kms")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}
