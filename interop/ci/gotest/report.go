package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ksa-go/ksa/internal/skipmark"
	"github.com/ksa-go/ksa/interop/internal/cpmark"
)

// event is one line of go test -json: a test event of cmd/test2json, or a
// build event (Action "build-output" or "build-fail", with ImportPath).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

// report turns the events of go test -json back into plain go test's
// output, and counts the control-plane tests and the tests that skipped
// for want of a program.
type report struct {
	out     io.Writer
	verbose bool
	pkgs    map[string]*pkgState
	order   []string // packages in the order they started
	failed  bool     // whether a package failed
	tally   tally    // the control-plane tests
	nodes   tally    // the node tests
	// missing are the tests that skipped for want of a program other than
	// the control plane's, by subject and install command.
	missing map[needKey]*skips
}

// needKey groups skipped tests: what they need, and the command that
// installs it.
type needKey struct{ subject, install string }

// pkgState is what a running package has printed so far.
type pkgState struct {
	output []string              // lines outside any test
	tests  map[string]*testState // running tests
	order  []string              // tests in the order they started
}

// testState is what a running test has printed so far.
type testState struct {
	output   []string
	children []string       // the blocks of its failed subtests
	version  string         // the release it ran on, from a cpmark Using line
	node     string         // the kubelet release it ran, from a cpmark NodeUsing line
	skip     *skipmark.Skip // why it skipped: the first skipmark line it printed
}

// block returns a failed test's output as plain go test prints it: its
// "--- FAIL" line, what it logged, then its failed subtests' blocks,
// indented.
func (t *testState) block() []string {
	var result, rest []string
	for _, line := range t.output {
		if strings.HasPrefix(line, "--- ") {
			result = append(result, line)
		} else {
			rest = append(rest, line)
		}
	}
	lines := slices.Concat(result, rest)
	for _, c := range t.children {
		lines = append(lines, "    "+c)
	}
	return lines
}

func newReport(out io.Writer, verbose bool) *report {
	return &report{
		out: out, verbose: verbose, pkgs: map[string]*pkgState{}, missing: map[needKey]*skips{},
		tally: tally{name: "control plane", program: "kube-apiserver"},
		nodes: tally{name: "node", program: "kubelet"},
	}
}

// read handles every event from rd, passing through lines that are not
// events.
func (r *report) read(rd io.Reader) error {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var e event
		if line := sc.Bytes(); len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(r.out, "%s\n", line)
			continue
		}
		r.handle(e)
	}
	return sc.Err()
}

func (r *report) handle(e event) {
	switch e.Action {
	case "build-output":
		io.WriteString(r.out, e.Output)
		return
	case "build-fail":
		return
	}
	p := r.pkgs[e.Package]
	if p == nil {
		p = &pkgState{tests: map[string]*testState{}}
		r.pkgs[e.Package] = p
		r.order = append(r.order, e.Package)
	}
	if e.Test == "" {
		switch e.Action {
		case "output":
			if r.verbose {
				io.WriteString(r.out, e.Output)
			} else {
				p.output = append(p.output, e.Output)
			}
		case "pass", "fail", "skip":
			r.endPackage(e.Package, p, e.Action == "fail")
		}
		return
	}
	t := p.tests[e.Test]
	if t == nil {
		t = &testState{}
		p.tests[e.Test] = t
		p.order = append(p.order, e.Test)
	}
	switch e.Action {
	case "output":
		if v, ok := cpmark.ParseUsing(e.Output); ok {
			t.version = v
		}
		if v, ok := cpmark.ParseNodeUsing(e.Output); ok {
			t.node = v
		}
		// The first mark is the skip's message; a script's log, printed
		// after it, may quote it again.
		if s, ok := skipmark.Parse(e.Output); ok && t.skip == nil {
			t.skip = &s
		}
		switch {
		case r.verbose:
			io.WriteString(r.out, e.Output)
		case !strings.HasPrefix(e.Output, "=== "): // not RUN, PAUSE, CONT, NAME
			t.output = append(t.output, e.Output)
		}
	case "pass", "fail", "skip":
		switch {
		case e.Action == "skip" && t.skip != nil && t.skip.Subject == cpmark.Subject:
			r.tally.skip(e.Package, *t.skip)
		case e.Action == "skip" && t.skip != nil && t.skip.Subject == cpmark.NodeSubject:
			r.nodes.skip(e.Package, *t.skip)
		case e.Action == "skip" && t.skip != nil:
			k := needKey{t.skip.Subject, t.skip.Install}
			if r.missing[k] == nil {
				r.missing[k] = &skips{}
			}
			r.missing[k].add(e.Package, *t.skip)
		case e.Action != "skip":
			if t.version != "" {
				r.tally.ran(e.Package, t.version, e.Action == "fail")
			}
			if t.node != "" {
				r.nodes.ran(e.Package, t.node, e.Action == "fail")
			}
		}
		delete(p.tests, e.Test)
		if e.Action != "fail" || r.verbose {
			return
		}
		// A subtest's block goes into its parent's, which ends after it.
		if i := strings.LastIndexByte(e.Test, '/'); i > 0 && p.tests[e.Test[:i]] != nil {
			parent := p.tests[e.Test[:i]]
			parent.children = append(parent.children, t.block()...)
			return
		}
		r.write(t.block())
	}
}

func (r *report) write(lines []string) {
	for _, line := range lines {
		io.WriteString(r.out, line)
	}
}

// endPackage prints what plain go test prints for a package that ended: the
// "ok" or "?" line of one that passed; everything outside passing tests
// for one that failed, including tests that never ended (a panic, a
// timeout).
func (r *report) endPackage(name string, p *pkgState, failed bool) {
	r.failed = r.failed || failed
	if !r.verbose {
		if failed {
			for _, test := range p.order {
				if t := p.tests[test]; t != nil {
					r.write(t.block())
				}
			}
		}
		for _, line := range p.output {
			if failed || strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "? ") {
				io.WriteString(r.out, line)
			}
		}
	}
	delete(r.pkgs, name)
	r.order = slices.DeleteFunc(r.order, func(s string) bool { return s == name })
}

// endRun prints what packages that never ended have printed, at the end
// of a run of go test.
func (r *report) endRun() {
	for _, name := range slices.Clone(r.order) {
		r.endPackage(name, r.pkgs[name], true)
	}
}

// finish prints what packages that never ended have printed, "FAIL" if a
// package failed (as go test does last), then a line for each program
// that tests skipped for want of, by subject, the node line, if any node
// test ran or skipped, and the control-plane line, if any control-plane
// test ran or skipped.
func (r *report) finish() {
	r.endRun()
	if r.failed {
		fmt.Fprintln(r.out, "FAIL")
	}
	for _, k := range slices.SortedFunc(maps.Keys(r.missing), func(a, b needKey) int {
		return cmp.Or(strings.Compare(a.subject, b.subject), strings.Compare(a.install, b.install))
	}) {
		fmt.Fprintln(r.out, k.subject+": "+r.missing[k].String())
	}
	for _, t := range []*tally{&r.nodes, &r.tally} {
		if line := t.line(); line != "" {
			fmt.Fprintln(r.out, line)
		}
	}
}

// skips counts tests that skipped for want of something.
type skips struct {
	n       int
	pkgs    map[string]bool
	missing []string // programs, in the order first reported
	reasons []string // other causes
	install string
}

func (s *skips) add(pkg string, m skipmark.Skip) {
	s.n++
	if s.pkgs == nil {
		s.pkgs = map[string]bool{}
	}
	s.pkgs[pkg] = true
	for _, p := range m.Missing {
		if !slices.Contains(s.missing, p) {
			s.missing = append(s.missing, p)
		}
	}
	if m.Reason != "" && !slices.Contains(s.reasons, m.Reason) {
		s.reasons = append(s.reasons, m.Reason)
	}
	if m.Install != "" {
		s.install = m.Install
	}
}

// String says how many tests skipped, why, and how to install what they
// need: "2 tests in 1 package skipped (azurite-blob not found); install it
// with npm install -g azurite@3.37.0".
func (s *skips) String() string {
	var causes []string
	if len(s.missing) > 0 {
		causes = append(causes, strings.Join(s.missing, ", ")+" not found")
	}
	causes = append(causes, s.reasons...)
	line := fmt.Sprintf("%s in %s skipped (%s)", count(s.n, "test"), count(len(s.pkgs), "package"), strings.Join(causes, "; "))
	if s.install != "" {
		them := "them"
		if len(s.missing) == 1 {
			them = "it"
		}
		line += fmt.Sprintf("; install %s with %s", them, s.install)
	}
	return line
}

// tally counts the tests that run a program of several releases: the
// control-plane tests (kube-apiserver), the node tests (kubelet).
type tally struct {
	name    string // what the line is about: "control plane", "node"
	program string // what the releases are of: "kube-apiserver", "kubelet"

	byRelease map[string]int // tests that ran, by release
	failed    int
	ranPkgs   map[string]bool
	skipped   skips
}

func (t *tally) skip(pkg string, s skipmark.Skip) { t.skipped.add(pkg, s) }

func (t *tally) ran(pkg, version string, failed bool) {
	if t.byRelease == nil {
		t.byRelease, t.ranPkgs = map[string]int{}, map[string]bool{}
	}
	t.byRelease[version]++
	t.ranPkgs[pkg] = true
	if failed {
		t.failed++
	}
}

// line returns the tally's line, such as "control plane: 30 tests in 2
// packages ran: 15 on kube-apiserver v1.37.2, 15 on v1.36.3", or "" if
// none of its tests ran or skipped.
func (t *tally) line() string {
	var parts []string
	if len(t.byRelease) > 0 {
		var total int
		var each []string
		for i, v := range slices.SortedFunc(maps.Keys(t.byRelease), newestFirst) {
			total += t.byRelease[v]
			label := v
			if i == 0 {
				label = t.program + " " + v
			}
			each = append(each, fmt.Sprintf("%d on %s", t.byRelease[v], label))
		}
		s := fmt.Sprintf("%s in %s ran: %s", count(total, "test"), count(len(t.ranPkgs), "package"), strings.Join(each, ", "))
		if t.failed > 0 {
			s += fmt.Sprintf(" (%d failed)", t.failed)
		}
		parts = append(parts, s)
	}
	if t.skipped.n > 0 {
		parts = append(parts, t.skipped.String())
	}
	if len(parts) == 0 {
		return ""
	}
	return t.name + ": " + strings.Join(parts, "; ")
}

// count returns "1 test", "2 tests".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// newestFirst orders releases such as "v1.37.2" by their numbers, newest
// first; what does not parse sorts last, by name.
func newestFirst(a, b string) int {
	na, oka := releaseNumbers(a)
	nb, okb := releaseNumbers(b)
	switch {
	case oka && okb:
		if c := slices.Compare(nb, na); c != 0 {
			return c
		}
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

func releaseNumbers(v string) ([]int, bool) {
	fields := strings.Split(strings.TrimPrefix(v, "v"), ".")
	nums := make([]int, len(fields))
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, false
		}
		nums[i] = n
	}
	return nums, true
}
