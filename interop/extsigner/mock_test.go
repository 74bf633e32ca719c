package extsigner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1mock "k8s.io/kubernetes/pkg/serviceaccount/externaljwt/plugin/testing/v1"

	"github.com/ksa-go/ksa/extsigner/signertest"
)

// What Kubernetes' mock signer skips: it signs whatever claims it gets
// and reports a new data_timestamp on every FetchKeys.
var mockSkips = []string{
	signertest.CheckStableTimestamp,
	signertest.CheckClaimsEmpty, signertest.CheckClaimsPadded, signertest.CheckClaimsAlphabet,
	signertest.CheckClaimsNotObject, signertest.CheckClaimsOversized, signertest.CheckClaimsLateExp,
}

// TestHarnessAgainstKubernetesMock: our conformance harness, run against
// Kubernetes' own mock signer (pkg/serviceaccount/externaljwt/plugin/
// testing/v1), agrees with kube-apiserver where the mock is conformant
// (every kube-apiserver check passes; so do header, kid, signature and
// token) and flags what it skips; broken the ways the mock lets a test
// break it, the harness tells which kube-apiserver catches.
func TestHarnessAgainstKubernetesMock(t *testing.T) {
	tests := []struct {
		name       string
		breakIt    func(*v1mock.MockSigner)
		wantKube   []string
		wantStrict []string
	}{
		{name: "as it is", wantStrict: mockSkips},
		{
			name:       "kid that FetchKeys does not publish",
			breakIt:    func(m *v1mock.MockSigner) { m.SigningKeyID = "kid-unpublished" },
			wantStrict: insertAfter(mockSkips, signertest.CheckStableTimestamp, signertest.CheckKeyPublished),
		},
		{
			name:       "typ other than JWT",
			breakIt:    func(m *v1mock.MockSigner) { m.TokenType = "at+jwt" },
			wantKube:   []string{signertest.CheckSign},
			wantStrict: mockSkips,
		},
		{
			name:       "alg kube-apiserver does not accept",
			breakIt:    func(m *v1mock.MockSigner) { m.SigningAlg = "PS256" },
			wantKube:   []string{signertest.CheckSign},
			wantStrict: mockSkips,
		},
		{
			name: "signing key excluded from discovery",
			breakIt: func(m *v1mock.MockSigner) {
				keys := m.GetSupportedKeys()
				k := keys["kid-1"]
				k.ExcludeFromOidcDiscovery = true
				keys["kid-1"] = k
				m.SetSupportedKeys(keys)
			},
			wantKube:   []string{signertest.CheckSign},
			wantStrict: mockSkips,
		},
		{
			name:       "lifetime below ten minutes",
			breakIt:    func(m *v1mock.MockSigner) { m.MaxTokenExpirationSeconds = 599 },
			wantKube:   []string{signertest.CheckMetadata},
			wantStrict: deleteName(mockSkips, signertest.CheckClaimsLateExp),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sock := socketPath(t)
			m := v1mock.NewMockSigner(t, sock)
			if tt.breakIt != nil {
				tt.breakIt(m)
			}
			report, err := signertest.Run(t.Context(), signertest.Config{Address: sock})
			require.NoError(t, err)
			t.Log("\n" + report.String())
			assert.Equal(t, tt.wantKube, report.Failed(signertest.LevelKubernetes), report.String())
			assert.Equal(t, tt.wantStrict, report.Failed(signertest.LevelStrict), report.String())
		})
	}
}

func insertAfter(list []string, after, name string) []string {
	var out []string
	for _, s := range list {
		out = append(out, s)
		if s == after {
			out = append(out, name)
		}
	}
	return out
}

func deleteName(list []string, name string) []string {
	var out []string
	for _, s := range list {
		if s != name {
			out = append(out, s)
		}
	}
	return out
}
