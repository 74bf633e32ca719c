package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cliSpec is what one subcommand of a cloud's command-line tool takes:
// its positional arguments and its flags (required ones marked).
type cliSpec struct {
	positional int
	flags      map[string]bool // name → required
}

// cliSpecs are the subcommands "ksa issuer register" prints, with the
// flags each tool documents for them (az 2.x, aws 2.x, gcloud).
var cliSpecs = map[string]cliSpec{
	"az identity federated-credential create": {flags: map[string]bool{
		"--name": true, "--identity-name": true, "--resource-group": true, "--issuer": true, "--subject": true,
		"--audiences": false, "--subscription": false}},
	"az ad app federated-credential create": {flags: map[string]bool{"--id": true, "--parameters": true}},
	"aws iam create-open-id-connect-provider": {flags: map[string]bool{
		"--url": true, "--client-id-list": false, "--thumbprint-list": false}},
	"aws iam create-role": {flags: map[string]bool{"--role-name": true, "--assume-role-policy-document": true}},
	"gcloud iam workload-identity-pools create": {positional: 1, flags: map[string]bool{
		"--location": true, "--project": false}},
	"gcloud iam workload-identity-pools providers create-oidc": {positional: 1, flags: map[string]bool{
		"--location": true, "--workload-identity-pool": true, "--issuer-uri": true, "--project": false,
		"--attribute-mapping": false, "--allowed-audiences": false}},
	"gcloud projects add-iam-policy-binding": {positional: 1, flags: map[string]bool{"--member": true, "--role": true}},
}

// runcli runs every command of a registration (-o json output) as a
// shell would, with az, aws and gcloud stand-ins on $PATH that record
// their arguments, then holds each call to the tool's own flags and to
// the request bodies printed beside it:
//
//	runcli FILE
func cmdRunCLI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: runcli FILE")
	}
	var reg struct {
		Commands []string `json:"commands"`
		Requests []struct {
			URL  string          `json:"url"`
			Body json.RawMessage `json:"body"`
		} `json:"requests"`
	}
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &reg))
	bin := ts.MkAbs("clibin")
	ts.Check(os.MkdirAll(bin, 0o755))
	log := ts.MkAbs("cli.calls")
	ts.Check(os.WriteFile(log, nil, 0o644))
	for _, tool := range []string{"az", "aws", "gcloud"} {
		// Each call: the tool's name, then its arguments, each ended by NUL,
		// then a newline.
		script := "#!/bin/sh\n{ printf '%s\\0' " + tool + " \"$@\"; printf '\\n'; } >> " + shellWord(log) + "\n"
		ts.Check(os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755))
	}
	for _, c := range reg.Commands {
		ts.Check(ts.Exec("sh", "-c", "PATH="+shellWord(bin)+":$PATH; "+c))
	}
	raw := strings.TrimSuffix(ts.ReadFile(log), "\n")
	if raw == "" {
		ts.Fatalf("no command ran")
	}
	calls := strings.Split(raw, "\x00\n")
	if len(calls) != len(reg.Commands) {
		ts.Fatalf("%d commands printed, %d ran", len(reg.Commands), len(calls))
	}
	bodies := ""
	for _, r := range reg.Requests {
		bodies += r.URL + string(r.Body)
	}
	for _, call := range calls {
		argv := strings.Split(strings.TrimSuffix(call, "\x00"), "\x00")
		checkCLICall(ts, argv, bodies)
	}
}

// checkCLICall holds one call to its subcommand's flags: known flags
// only, each once, the required ones there, values present, and every
// JSON value parsing; each flag's value must appear in a request.
func checkCLICall(ts *testscript.TestScript, argv []string, bodies string) {
	var path []string
	i := 0
	for ; i < len(argv) && !strings.HasPrefix(argv[i], "-"); i++ {
		path = append(path, argv[i])
	}
	var spec cliSpec
	var name string
	for n := len(path); n > 0; n-- {
		if s, ok := cliSpecs[strings.Join(path[:n], " ")]; ok {
			spec, name = s, strings.Join(path[:n], " ")
			if len(path)-n != s.positional {
				ts.Fatalf("%s takes %d positional arguments, got %q", name, s.positional, path[n:])
			}
			break
		}
	}
	if name == "" {
		ts.Fatalf("%q is no subcommand the stand-ins know", strings.Join(path, " "))
	}
	seen := map[string]bool{}
	for ; i < len(argv); i++ {
		flag, value, hasValue := strings.Cut(argv[i], "=")
		if !hasValue {
			if i+1 >= len(argv) {
				ts.Fatalf("%s: %s has no value", name, flag)
			}
			i++
			value = argv[i]
		}
		if _, ok := spec.flags[flag]; !ok {
			ts.Fatalf("%s has no flag %s", name, flag)
		}
		if seen[flag] {
			ts.Fatalf("%s: %s given twice", name, flag)
		}
		seen[flag] = true
		if strings.HasPrefix(value, "{") {
			var v any
			if err := json.Unmarshal([]byte(value), &v); err != nil {
				ts.Fatalf("%s %s: %v", name, flag, err)
			}
			continue
		}
		if !strings.Contains(bodies, value) && !slices.Contains([]string{"--location", "--project", "--name", "--identity-name", "--resource-group", "--role-name", "--id", "--attribute-mapping", "--workload-identity-pool", "--role", "--member"}, flag) {
			ts.Fatalf("%s %s %q is in no request", name, flag, value)
		}
	}
	for flag, req := range spec.flags {
		if req && !seen[flag] {
			ts.Fatalf("%s needs %s", name, flag)
		}
	}
	ts.Logf("ran %s with %d flags", name, len(seen))
}

// shellWord quotes s for a POSIX shell.
func shellWord(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
