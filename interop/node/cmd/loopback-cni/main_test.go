package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// TestRunErrors: what the plugin refuses, with the spec's error codes,
// before it touches any namespace.
func TestRunErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		env    map[string]string
		config string
		code   int
	}{
		{name: "not JSON", env: map[string]string{"CNI_COMMAND": "ADD"}, config: "{", code: codeDecodeFailure},
		{name: "too large", env: map[string]string{"CNI_COMMAND": "ADD"}, config: `{"x":"` + strings.Repeat("a", maxConfig) + `"}`, code: codeInvalidConfig},
		{name: "old version", env: map[string]string{"CNI_COMMAND": "ADD", "CNI_NETNS": "/x", "CNI_IFNAME": "eth0"}, config: `{"cniVersion":"0.2.0"}`, code: codeIncompatibleVersion},
		{name: "no version", env: map[string]string{"CNI_COMMAND": "ADD", "CNI_NETNS": "/x", "CNI_IFNAME": "eth0"}, config: `{}`, code: codeIncompatibleVersion},
		{name: "no command", env: map[string]string{}, config: `{"cniVersion":"1.0.0"}`, code: codeInvalidEnv},
		{name: "unknown command", env: map[string]string{"CNI_COMMAND": "GC"}, config: `{"cniVersion":"1.0.0"}`, code: codeInvalidEnv},
		{name: "ADD without a namespace", env: map[string]string{"CNI_COMMAND": "ADD", "CNI_IFNAME": "eth0"}, config: `{"cniVersion":"1.0.0"}`, code: codeInvalidEnv},
		{name: "CHECK without an interface", env: map[string]string{"CNI_COMMAND": "CHECK", "CNI_NETNS": "/x"}, config: `{"cniVersion":"1.0.0"}`, code: codeInvalidEnv},
		{name: "interface name too long", env: map[string]string{"CNI_COMMAND": "ADD", "CNI_NETNS": "/x", "CNI_IFNAME": "eth0123456789012"}, config: `{"cniVersion":"1.0.0"}`, code: codeInvalidEnv},
		{name: "interface name with a slash", env: map[string]string{"CNI_COMMAND": "ADD", "CNI_NETNS": "/x", "CNI_IFNAME": "a/b"}, config: `{"cniVersion":"1.0.0"}`, code: codeInvalidEnv},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			_, err := run(env(tt.env), strings.NewReader(tt.config), &out)
			var ce *cniError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, tt.code, ce.Code, ce.Error())
			assert.Empty(t, out.String())
		})
	}
}

func TestVersion(t *testing.T) {
	var out strings.Builder
	_, err := run(env(map[string]string{"CNI_COMMAND": "VERSION"}), strings.NewReader(`{"cniVersion":"1.0.0"}`), &out)
	require.NoError(t, err)
	assert.JSONEq(t, `{"cniVersion":"1.0.0","supportedVersions":["0.3.0","0.3.1","0.4.0","1.0.0"]}`, out.String())
}

// TestDel: DEL succeeds without touching anything, even for a namespace
// that is gone.
func TestDel(t *testing.T) {
	var out strings.Builder
	_, err := run(env(map[string]string{"CNI_COMMAND": "DEL", "CNI_NETNS": "/nonexistent", "CNI_IFNAME": "eth0"}), strings.NewReader(`{"cniVersion":"0.4.0"}`), &out)
	require.NoError(t, err)
	assert.Empty(t, out.String())
}

// TestAddResult: the result names the interface asked for in the pod's
// namespace, with 127.0.0.1/8; results before 1.0.0 carry the IP version.
func TestAddResult(t *testing.T) {
	for version, want := range map[string]string{
		"1.0.0": `{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","mac":"00:00:00:00:00:00","sandbox":"/run/ns"}],"ips":[{"address":"127.0.0.1/8","interface":0}]}`,
		"0.3.1": `{"cniVersion":"0.3.1","interfaces":[{"name":"eth0","mac":"00:00:00:00:00:00","sandbox":"/run/ns"}],"ips":[{"version":"4","address":"127.0.0.1/8","interface":0}]}`,
	} {
		b, err := json.Marshal(addResult(version, "/run/ns", "eth0"))
		require.NoError(t, err)
		assert.JSONEq(t, want, string(b), version)
	}
}

// FuzzRun: any configuration, with the commands that touch no namespace,
// gives a result or a CNI error, never a panic.
func FuzzRun(f *testing.F) {
	f.Add("DEL", `{"cniVersion":"1.0.0","name":"n","type":"ksa-loopback"}`)
	f.Add("VERSION", `{"cniVersion":"0.3.1"}`)
	f.Add("DEL", `{"cniVersion":"0.4.0","prevResult":{"ips":[]}}`)
	f.Add("ADD", `{"cniVersion":"9"}`)
	f.Add("DEL", `[`)
	f.Fuzz(func(t *testing.T, cmd, config string) {
		if cmd == "ADD" || cmd == "CHECK" {
			cmd = "DEL"
		}
		var out strings.Builder
		_, err := run(env(map[string]string{"CNI_COMMAND": cmd, "CNI_IFNAME": "eth0"}), strings.NewReader(config), &out)
		var ce *cniError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("error %v is not a CNI error", err)
		}
	})
}
