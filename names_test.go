package ksa_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ksa-go/ksa"
)

func TestIsNamespaceAndIsObjectName(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	tests := []struct {
		name          string
		in            string
		wantNamespace bool
		wantObject    bool
	}{
		{name: "empty", in: "", wantNamespace: false, wantObject: false},
		{name: "one letter", in: "a", wantNamespace: true, wantObject: true},
		{name: "one digit", in: "0", wantNamespace: true, wantObject: true},
		{name: "all digits", in: "123", wantNamespace: true, wantObject: true},
		{name: "typical", in: "kube-system", wantNamespace: true, wantObject: true},
		{name: "inner dashes", in: "a--b", wantNamespace: true, wantObject: true},
		{name: "leading dash", in: "-a", wantNamespace: false, wantObject: false},
		{name: "trailing dash", in: "a-", wantNamespace: false, wantObject: false},
		{name: "only a dash", in: "-", wantNamespace: false, wantObject: false},
		{name: "upper case", in: "Default", wantNamespace: false, wantObject: false},
		{name: "underscore", in: "a_b", wantNamespace: false, wantObject: false},
		{name: "colon", in: "a:b", wantNamespace: false, wantObject: false},
		{name: "slash", in: "a/b", wantNamespace: false, wantObject: false},
		{name: "space", in: "a b", wantNamespace: false, wantObject: false},
		{name: "trailing newline", in: "a\n", wantNamespace: false, wantObject: false},
		{name: "NUL", in: "a\x00", wantNamespace: false, wantObject: false},
		{name: "unicode letter", in: "café", wantNamespace: false, wantObject: false},
		{name: "unicode dash", in: "a\u2010b", wantNamespace: false, wantObject: false},
		{name: "fullwidth letter", in: "\uff41", wantNamespace: false, wantObject: false},
		{name: "invalid UTF-8", in: "a\xffb", wantNamespace: false, wantObject: false},
		{name: "dotted", in: "my.app", wantNamespace: false, wantObject: true},
		{name: "dotted digits", in: "10.0.0.1", wantNamespace: false, wantObject: true},
		{name: "leading dot", in: ".a", wantNamespace: false, wantObject: false},
		{name: "trailing dot", in: "a.", wantNamespace: false, wantObject: false},
		{name: "only a dot", in: ".", wantNamespace: false, wantObject: false},
		{name: "double dot", in: "a..b", wantNamespace: false, wantObject: false},
		{name: "dash before a dot", in: "a-.b", wantNamespace: false, wantObject: false},
		{name: "dash after a dot", in: "a.-b", wantNamespace: false, wantObject: false},
		{name: "dashes inside labels", in: "a-b.c-d", wantNamespace: false, wantObject: true},
		{name: "63 characters", in: label63, wantNamespace: true, wantObject: true},
		{name: "64 characters", in: label63 + "a", wantNamespace: false, wantObject: true},
		{name: "64 characters ending in a dash", in: label63 + "-", wantNamespace: false, wantObject: false},
		{name: "a subdomain label may exceed 63", in: strings.Repeat("a", 100) + ".b", wantNamespace: false, wantObject: true},
		{name: "253 characters", in: strings.Repeat("a", 253), wantNamespace: false, wantObject: true},
		{name: "254 characters", in: strings.Repeat("a", 254), wantNamespace: false, wantObject: false},
		{name: "253 characters with dots", in: strings.Repeat("ab.", 84) + "a", wantNamespace: false, wantObject: true},
		{name: "254 characters with dots", in: strings.Repeat("ab.", 84) + "ab", wantNamespace: false, wantObject: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantNamespace, ksa.IsNamespace(tt.in), "IsNamespace")
			assert.Equal(t, tt.wantObject, ksa.IsObjectName(tt.in), "IsObjectName")
			// The table itself must agree with Kubernetes.
			assert.Equal(t, tt.wantNamespace, len(validation.IsDNS1123Label(tt.in)) == 0, "IsDNS1123Label")
			assert.Equal(t, tt.wantObject, len(validation.IsDNS1123Subdomain(tt.in)) == 0, "IsDNS1123Subdomain")
		})
	}
}

// FuzzNamesAgreeWithApimachinery holds IsNamespace and IsObjectName to
// apimachinery's regular-expression validators for every input.
func FuzzNamesAgreeWithApimachinery(f *testing.F) {
	for _, s := range []string{
		"", "a", "0", "-", ".", "kube-system", "my.app", "a-", "-a", "a.", ".a", "a..b", "a-.b", "a.-b",
		"Default", "a_b", "café", "a\xffb", "a\n", "10.0.0.1",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253), strings.Repeat("a", 254),
		strings.Repeat("ab.", 84) + "a", strings.Repeat("ab.", 84) + "ab",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		assert.Equal(t, len(validation.IsDNS1123Label(s)) == 0, ksa.IsNamespace(s), "IsNamespace(%q)", s)
		assert.Equal(t, len(validation.IsDNS1123Subdomain(s)) == 0, ksa.IsObjectName(s), "IsObjectName(%q)", s)
	})
}
