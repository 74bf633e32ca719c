package credspec_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/credspec"
)

// TestEqual holds Equal to windows-gmsa's comparison of credential spec
// contents: byte-identical strings, else both parsed as JSON and compared
// deeply.
func TestEqual(t *testing.T) {
	tests := []struct {
		name      string
		pod, crd  string
		wantEqual bool
		wantErr   error
		// wantObject says which side the parse error names.
		wantObject bool
	}{
		{name: "identical", pod: `{"a":"b"}`, crd: `{"a":"b"}`, wantEqual: true},
		{name: "identical_non_json_not_parsed", pod: "not json", crd: "not json", wantEqual: true},
		{name: "whitespace", pod: "{\n  \"a\" : \"b\"\n}", crd: `{"a":"b"}`, wantEqual: true},
		{name: "key_order", pod: `{"b":1,"a":2}`, crd: `{"a":2,"b":1}`, wantEqual: true},
		{name: "key_case", pod: `{"a":"b"}`, crd: `{"A":"b"}`},
		{name: "value_case", pod: `{"a":"b"}`, crd: `{"a":"B"}`},
		{name: "int_vs_float", pod: `{"a":1}`, crd: `{"a":1.0}`, wantEqual: true},
		{name: "exponent", pod: `{"a":100}`, crd: `{"a":1e2}`, wantEqual: true},
		{name: "number_vs_string", pod: `{"a":1}`, crd: `{"a":"1"}`},
		{name: "array_order", pod: `{"a":[1,2]}`, crd: `{"a":[2,1]}`},
		{name: "extra_null_key", pod: `{"a":1,"b":null}`, crd: `{"a":1}`},
		{name: "duplicate_key_last_wins", pod: `{"B":"zzz","B":"v"}`, crd: `{"B":"v"}`, wantEqual: true},
		{name: "escaped_vs_literal", pod: `{"p":"\u003cpw\u003e"}`, crd: `{"p":"<pw>"}`, wantEqual: true},
		{name: "invalid_utf8_decodes_to_replacement", pod: "{\"a\":\"\xff\"}", crd: "{\"a\":\"\xfe\"}", wantEqual: true},
		{name: "null_vs_object", pod: `null`, crd: `{}`},
		{name: "null_vs_null_spaced", pod: `null`, crd: ` null `, wantEqual: true},
		{name: "nested_object_vs_array", pod: `{"a":{}}`, crd: `{"a":[]}`},
		{name: "bool", pod: `{"a":true}`, crd: `{"a":true }`, wantEqual: true},
		{name: "not_json", pod: "i ain't no JSON object", crd: `{}`, wantErr: credspec.ErrInvalidSpec},
		{name: "array", pod: `[]`, crd: `{}`, wantErr: credspec.ErrInvalidSpec},
		{name: "string", pod: `"x"`, crd: `{}`, wantErr: credspec.ErrInvalidSpec},
		{name: "empty", pod: ``, crd: `{}`, wantErr: credspec.ErrInvalidSpec},
		{name: "trailing_garbage", pod: `{} x`, crd: `{}`, wantErr: credspec.ErrInvalidSpec},
		{name: "number_out_of_range", pod: `{"a":1e400}`, crd: `{}`, wantErr: credspec.ErrInvalidSpec},
		{name: "crd_side_not_json", pod: `{}`, crd: `{`, wantErr: credspec.ErrInvalidSpec, wantObject: true},
		{name: "pod_at_limit", pod: `{"a":"` + strings.Repeat("x", credspec.MaxSize-8) + `"}`, crd: `{}`},
		{name: "pod_over_limit", pod: `{"a":"` + strings.Repeat("x", credspec.MaxSize-7) + `"}`, crd: `{}`, wantErr: credspec.ErrTooLarge},
		{name: "crd_over_limit_even_if_identical", pod: strings.Repeat(" ", credspec.MaxSize+1), crd: strings.Repeat(" ", credspec.MaxSize+1), wantErr: credspec.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eq, err := credspec.Equal(tt.pod, tt.crd)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.False(t, eq)
				if tt.wantErr == credspec.ErrInvalidSpec {
					assert.Equal(t, tt.wantObject, strings.Contains(err.Error(), "unable to parse CRD "))
					if tt.wantObject {
						assert.Contains(t, err.Error(), "unable to parse CRD ")
					} else {
						assert.Contains(t, err.Error(), "unable to parse \"")
					}
				}
				if tt.wantErr == credspec.ErrTooLarge {
					assert.Contains(t, err.Error(), fmt.Sprintf("of %d bytes is over the %d-byte limit", credspec.MaxSize+1, credspec.MaxSize), "size and limit")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantEqual, eq)
			rev, err := credspec.Equal(tt.crd, tt.pod)
			require.NoError(t, err)
			assert.Equal(t, eq, rev, "symmetric")
		})
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr error
	}{
		{name: "sorted_compact", in: "{ \"b\": [1, 2],\n \"a\": {\"d\": 1, \"c\": null} }", want: `{"a":{"c":null,"d":1},"b":[1,2]}`},
		{name: "html_escaped", in: `{"p":"<a&b>"}`, want: `{"p":"\u003ca\u0026b\u003e"}`},
		{name: "line_separators_escaped", in: "{\"p\":\"\u2028\"}", want: `{"p":"\u2028"}`},
		{name: "invalid_utf8_replaced", in: "{\"p\":\"\xff\"}", want: "{\"p\":\"\ufffd\"}"},
		{name: "integers_exact", in: `{"n":123456789012345678}`, want: `{"n":123456789012345678}`},
		{name: "integral_float", in: `{"n":1.0,"m":1e2,"z":-0}`, want: `{"m":100,"n":1,"z":0}`},
		{name: "fraction", in: `{"n":0.5}`, want: `{"n":0.5}`},
		{name: "null", in: `null`, want: `null`},
		{name: "not_object", in: `[1]`, wantErr: credspec.ErrInvalidSpec},
		{name: "trailing", in: `{}{}`, wantErr: credspec.ErrInvalidSpec},
		{name: "out_of_range", in: `{"n":1e400}`, wantErr: credspec.ErrInvalidSpec},
		{name: "input_over_limit", in: `{"a":"` + strings.Repeat("x", credspec.MaxSize) + `"}`, wantErr: credspec.ErrTooLarge},
		{name: "output_over_limit", in: `{"a":"` + strings.Repeat("<", credspec.MaxSize/2) + `"}`, wantErr: credspec.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := credspec.Canonical(tt.in)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			again, err := credspec.Canonical(got)
			require.NoError(t, err)
			assert.Equal(t, got, again, "idempotent")
			eq, err := credspec.Equal(tt.in, got)
			require.NoError(t, err)
			assert.True(t, eq)
		})
	}
}

// TestAmbiguousInlineSpecDenied: a pod's inlined credential spec that
// parsers may read differently is denied with 422, even where the
// last-wins comparison would find it equal to the object's contents (the
// container runtime may read the first duplicate).
func TestAmbiguousInlineSpecDenied(t *testing.T) {
	stored := `{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com","MachineAccountName":"webapp01"}}`
	src, err := credspec.NewStaticSourceJSON(map[string]string{"webapp01": stored})
	require.NoError(t, err)
	allowAll := credspec.AuthorizerFunc(func(context.Context, credspec.UseRequest) (credspec.Decision, error) {
		return credspec.Decision{Allowed: true}, nil
	})
	v, err := credspec.NewValidator(credspec.ValidatorConfig{Source: src, Authorizer: allowAll})
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		inline  string
		wantErr error
	}{
		{name: "same contents", inline: stored},
		{name: "same contents, reordered", inline: `{"DomainJoinConfig":{"MachineAccountName":"webapp01","DnsName":"contoso.com"},"CmsPlugins":["ActiveDirectory"]}`},
		{name: "duplicate at the top, last wins equal",
			inline:  `{"CmsPlugins":["Other"],"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com","MachineAccountName":"webapp01"}}`,
			wantErr: credspec.ErrAmbiguousSpec},
		{name: "duplicate nested, last wins equal",
			inline:  `{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"evil.example","DnsName":"contoso.com","MachineAccountName":"webapp01"}}`,
			wantErr: credspec.ErrAmbiguousSpec},
		{name: "duplicate by escape", inline: `{"CmsPlugins":["ActiveDirectory"],"\u0043msPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com","MachineAccountName":"webapp01"}}`,
			wantErr: credspec.ErrAmbiguousSpec},
		{name: "lone surrogate", inline: `{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com\ud800","MachineAccountName":"webapp01"}}`,
			wantErr: credspec.ErrAmbiguousSpec},
		{name: "invalid UTF-8", inline: "{\"CmsPlugins\":[\"ActiveDirectory\"],\"DomainJoinConfig\":{\"DnsName\":\"contoso.com\xff\",\"MachineAccountName\":\"webapp01\"}}",
			wantErr: credspec.ErrAmbiguousSpec},
		{name: "not JSON keeps windows-gmsa's answer", inline: `not json`, wantErr: credspec.ErrContentsMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "web"},
				Spec: corev1.PodSpec{ServiceAccountName: "frontend", SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
					GMSACredentialSpecName: new("webapp01"), GMSACredentialSpec: new(tc.inline),
				}}},
			}
			err := v.ValidateCreate(t.Context(), "web", pod, nil)
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
			var d *credspec.Denial
			require.True(t, errors.As(err, &d))
			assert.Equal(t, int32(http.StatusUnprocessableEntity), d.Code)
			if tc.wantErr == credspec.ErrAmbiguousSpec {
				require.ErrorIs(t, d.Err, credspec.ErrAmbiguousSpec, "the denial wraps the ambiguity check's error")
			}
		})
	}
}
