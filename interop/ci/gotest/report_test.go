package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The recordings in testdata are go test -json's output for the module in
// testdata/fixture, made with
//
//	cd testdata/fixture
//	for m in fresh installed partial; do FX_MODE=$m go test -p 1 -count=1 -json ./... > ../$m.jsonl; done
//	FX_MODE=failing go test -p 1 -count=1 -tags failing -json ./... > ../failing.jsonl
//
// fresh: every control-plane test skips for want of etcd and both
// kube-apiservers, the node tests for want of containerd, runc and the
// kubelet, and the tests of package ks for want of SoftHSM2 and Azurite;
// installed: they run on both releases (the node tests on v1.37.2);
// partial: v1.36.3 is missing; failing: a control-plane test, a plain
// test and a build fail.

func TestReport(t *testing.T) {
	for _, tt := range []struct {
		recording string
		verbose   bool
		// want are the lines of the report, in order, each a prefix of its
		// line (elapsed times vary).
		want []string
		// summary are the lines that end the report, compared whole: the
		// tests that skipped for want of a program, then the control plane.
		summary []string
		// hidden must not appear anywhere.
		hidden []string
	}{
		{
			recording: "fresh",
			want: []string{
				"?   \texample.com/fixture/broken\t[no test files]",
				"ok  \texample.com/fixture/cp\t",
				"ok  \texample.com/fixture/cp2\t",
				"ok  \texample.com/fixture/ks\t",
				"ok  \texample.com/fixture/node\t",
				"?   \texample.com/fixture/none\t[no test files]",
				"ok  \texample.com/fixture/plain\t",
			},
			summary: []string{
				"Azurite: 1 test in 1 package skipped (azurite-blob not found); install it with npm install -g azurite@3.37.0",
				"SoftHSM2: 2 tests in 1 package skipped (softhsm2-util not found); install it with apt-get install -y softhsm2",
				"node: 2 tests in 1 package skipped (containerd, runc, kubelet v1.37.2 not found); install them with .ci/install-node.sh",
				"control plane: 6 tests in 2 packages skipped (etcd, kube-apiserver v1.37.2, kube-apiserver v1.36.3 not found); install them with .ci/install-controlplane.sh",
			},
			hidden: []string{"=== RUN", "controlplane: skipped", "node: skipped", "TestMain output", "PASS\n", "not a control-plane skip", "SoftHSM2: skipped", "keystoretest:"},
		},
		{
			recording: "installed",
			want: []string{
				"?   \texample.com/fixture/broken\t[no test files]",
				"ok  \texample.com/fixture/cp\t",
				"ok  \texample.com/fixture/cp2\t",
				"ok  \texample.com/fixture/ks\t",
				"ok  \texample.com/fixture/node\t",
				"?   \texample.com/fixture/none\t[no test files]",
				"ok  \texample.com/fixture/plain\t",
			},
			summary: []string{
				"node: 2 tests in 1 package ran: 2 on kubelet v1.37.2",
				"control plane: 8 tests in 3 packages ran: 5 on kube-apiserver v1.37.2, 3 on v1.36.3",
			},
			hidden: []string{"controlplane: using", "node: using", "token requested", "unit log line", "pod running"},
		},
		{
			recording: "partial",
			want: []string{
				"?   \texample.com/fixture/broken\t[no test files]",
				"ok  \texample.com/fixture/cp\t",
				"ok  \texample.com/fixture/cp2\t",
				"ok  \texample.com/fixture/ks\t",
				"ok  \texample.com/fixture/node\t",
				"?   \texample.com/fixture/none\t[no test files]",
				"ok  \texample.com/fixture/plain\t",
			},
			summary: []string{
				"node: 2 tests in 1 package ran: 2 on kubelet v1.37.2",
				"control plane: 5 tests in 3 packages ran: 5 on kube-apiserver v1.37.2; " +
					"3 tests in 2 packages skipped (kube-apiserver v1.36.3 not found); install it with .ci/install-controlplane.sh",
			},
		},
		{
			recording: "failing",
			want: []string{
				"# example.com/fixture/broken [example.com/fixture/broken.test]",
				"broken/broken_test.go:9:14: cannot use",
				"FAIL\texample.com/fixture/broken [build failed]",
				"--- FAIL: TestDiscovery (",
				"    --- FAIL: TestDiscovery/v1.36.3 (",
				"        cp_test.go:21: controlplane: using kube-apiserver v1.36.3",
				"        cp_test.go:36: discovery document differs on v1.36.3",
				"FAIL",
				"FAIL\texample.com/fixture/cp\t",
				"ok  \texample.com/fixture/cp2\t",
				"ok  \texample.com/fixture/ks\t",
				"ok  \texample.com/fixture/node\t",
				"?   \texample.com/fixture/none\t[no test files]",
				"--- FAIL: TestSub (",
				"    --- FAIL: TestSub/b (",
				"        plain_test.go:17: got 1, want 2",
				"FAIL",
				"FAIL\texample.com/fixture/plain\t",
				"FAIL",
			},
			summary: []string{
				"node: 2 tests in 1 package ran: 2 on kubelet v1.37.2",
				"control plane: 8 tests in 3 packages ran: 5 on kube-apiserver v1.37.2, 3 on v1.36.3 (1 failed)",
			},
			hidden: []string{"=== RUN", "token requested", "unit log line", "passing log line", "TestMain output", "--- PASS", "--- SKIP"},
		},
	} {
		t.Run(tt.recording, func(t *testing.T) {
			var out strings.Builder
			r := newReport(&out, tt.verbose)
			f, err := os.Open(filepath.Join("testdata", tt.recording+".jsonl"))
			require.NoError(t, err)
			defer f.Close()
			require.NoError(t, r.read(f))
			r.finish()

			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			require.Len(t, lines, len(tt.want)+len(tt.summary), "report:\n%s", out.String())
			for i, want := range tt.want {
				assert.True(t, strings.HasPrefix(lines[i], want), "line %d = %q, want it to start with %q", i+1, lines[i], want)
			}
			assert.Equal(t, tt.summary, lines[len(tt.want):])
			for _, h := range tt.hidden {
				assert.NotContains(t, out.String(), h)
			}
		})
	}
}

// TestReportVerbose: with -v, everything go test prints is printed, and
// the node and control-plane lines still end it.
func TestReportVerbose(t *testing.T) {
	var out strings.Builder
	r := newReport(&out, true)
	f, err := os.Open(filepath.Join("testdata", "installed.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, r.read(f))
	r.finish()
	for _, want := range []string{"=== RUN   TestTokenRequest/v1.37.2", "token requested", "unit log line", "TestMain output", "--- PASS: TestSub/a"} {
		assert.Contains(t, out.String(), want)
	}
	assert.True(t, strings.HasSuffix(out.String(), "\nnode: 2 tests in 1 package ran: 2 on kubelet v1.37.2\n"+
		"control plane: 8 tests in 3 packages ran: 5 on kube-apiserver v1.37.2, 3 on v1.36.3\n"), out.String())
}

// TestReportNotEvents: lines that are not events pass through, and with no
// control-plane test there is no control-plane line.
func TestReportNotEvents(t *testing.T) {
	var out strings.Builder
	r := newReport(&out, false)
	require.NoError(t, r.read(strings.NewReader("go: warning: something\n{\"Action\":\"start\",\"Package\":\"p\"}\n"+
		`{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}`+"\n"+`{"Action":"pass","Package":"p"}`+"\n")))
	r.finish()
	assert.Equal(t, "go: warning: something\nok  \tp\t0.1s\n", out.String())
}

// TestReportUnfinished: a package whose events stop (go test killed) has its
// output and that of its running tests printed.
func TestReportUnfinished(t *testing.T) {
	var out strings.Builder
	r := newReport(&out, false)
	require.NoError(t, r.read(strings.NewReader(`{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestHang"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"    hang_test.go:9: waiting\n"}
{"Action":"output","Package":"p","Output":"panic: test timed out after 1s\n"}
`)))
	r.finish()
	assert.Equal(t, "    hang_test.go:9: waiting\npanic: test timed out after 1s\nFAIL\n", out.String())
}

func TestNewestFirst(t *testing.T) {
	for _, tt := range []struct{ a, b string }{
		{"v1.37.2", "v1.36.3"},
		{"v1.37.10", "v1.37.9"},
		{"v1.36.3", "devel"},
	} {
		assert.Negative(t, newestFirst(tt.a, tt.b), "%s before %s", tt.a, tt.b)
		assert.Positive(t, newestFirst(tt.b, tt.a), "%s after %s", tt.b, tt.a)
	}
	assert.Zero(t, newestFirst("v1.37.2", "v1.37.2"))
}

func TestVerbose(t *testing.T) {
	for args, want := range map[string]bool{
		"-race ./...":           false,
		"-v ./...":              true,
		"-count=1 -v=true ./p":  true,
		"./p -args -v":          false,
		"-run TestX -test.v ./": true,
	} {
		assert.Equal(t, want, verbose(strings.Fields(args)), args)
	}
}

func TestSplitRuns(t *testing.T) {
	for _, tt := range []struct {
		args string
		want []goTest
	}{
		{args: "", want: []goTest{{}}},
		{args: "-race ./...", want: []goTest{{args: []string{"-race", "./..."}}}},
		{args: "-C .. -race ./... -C ../cmd/ksa -race ./... -C . ./...", want: []goTest{
			{dir: "..", args: []string{"-race", "./..."}},
			{dir: "../cmd/ksa", args: []string{"-race", "./..."}},
			{dir: ".", args: []string{"./..."}},
		}},
		{args: "-count=1 ./p -C=../q ./...", want: []goTest{{args: []string{"-count=1", "./p"}}, {dir: "../q", args: []string{"./..."}}}},
		{args: "-C ../q", want: []goTest{{dir: "../q"}}},
	} {
		got, err := splitRuns(strings.Fields(tt.args))
		require.NoError(t, err, tt.args)
		assert.Equal(t, tt.want, got, tt.args)
	}
	for _, args := range []string{"-C", "./... -C", "-C="} {
		_, err := splitRuns(strings.Fields(args))
		assert.Error(t, err, args)
	}
}

// TestRun runs go test on the fixture through run: the report goes to
// stdout and the exit status is go test's.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the fixture's tests")
	}
	for mode, want := range map[string]int{"installed": 0, "failing": 1} {
		t.Run(mode, func(t *testing.T) {
			t.Setenv("FX_MODE", mode)
			var stdout, stderr strings.Builder
			code := run(t.Context(), []goTest{{dir: "testdata/fixture", args: []string{"-count=1", "./cp"}}}, &stdout, &stderr)
			assert.Equal(t, want, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			assert.Contains(t, stdout.String(), "\ncontrol plane: 4 tests in 1 package ran: 2 on kube-apiserver v1.37.2, 2 on v1.36.3")
		})
	}
}

// TestRunSeveral: the runs of several -C go to the end one after the other,
// a failing one first; the status is the failing one's, and the last lines
// count the skips of them all.
func TestRunSeveral(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the fixture's tests")
	}
	t.Setenv("FX_MODE", "fresh")
	runs, err := splitRuns([]string{"-C", "testdata/fixture", "-count=1", "-tags", "failing", "./broken", "-C", "testdata/fixture", "-count=1", "./cp", "./ks"})
	require.NoError(t, err)
	var stdout, stderr strings.Builder
	code := run(t.Context(), runs, &stdout, &stderr)
	assert.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Contains(t, stdout.String(), "FAIL\texample.com/fixture/broken [build failed]\n")
	assert.Contains(t, stdout.String(), "\nok  \texample.com/fixture/ks\t")
	assert.True(t, strings.HasSuffix(stdout.String(), "\nFAIL\n"+
		"Azurite: 1 test in 1 package skipped (azurite-blob not found); install it with npm install -g azurite@3.37.0\n"+
		"SoftHSM2: 2 tests in 1 package skipped (softhsm2-util not found); install it with apt-get install -y softhsm2\n"+
		"control plane: 4 tests in 1 package skipped (etcd, kube-apiserver v1.37.2, kube-apiserver v1.36.3 not found); install them with .ci/install-controlplane.sh\n"), stdout.String())
}
