package ksa_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
)

func TestServiceAccountNames(t *testing.T) {
	sa := ksa.ServiceAccount{Namespace: "myns", Name: "mysvcacct", UID: "sa-uid"}
	assert.Equal(t, "system:serviceaccount:myns:mysvcacct", sa.Username())
	assert.Equal(t, []string{"system:serviceaccounts", "system:serviceaccounts:myns"}, sa.Groups())
	assert.Equal(t, "system:serviceaccounts:myns", ksa.NamespaceGroup("myns"))
	assert.Equal(t, sa.Username(), sa.String())
}

// TestParseUsername holds ParseUsername to Kubernetes' SplitUsername cases
// (k8s.io/apiserver/pkg/authentication/serviceaccount).
func TestParseUsername(t *testing.T) {
	tests := []struct {
		name     string
		username string
		want     ksa.ServiceAccount
		wantErr  error
	}{
		{name: "valid", username: "system:serviceaccount:foo:bar", want: ksa.ServiceAccount{Namespace: "foo", Name: "bar"}},
		{name: "dotted name", username: "system:serviceaccount:foo:bar.baz", want: ksa.ServiceAccount{Namespace: "foo", Name: "bar.baz"}},
		{name: "empty parts", username: "system:serviceaccount::", wantErr: ksa.ErrInvalidName},
		{name: "empty namespace", username: "system:serviceaccount::foo", wantErr: ksa.ErrInvalidName},
		{name: "empty name", username: "system:serviceaccount:foo:", wantErr: ksa.ErrInvalidName},
		{name: "three parts", username: "system:serviceaccount:foo:bar:baz", wantErr: ksa.ErrInvalidUsername},
		{name: "space in namespace", username: "system:serviceaccount:foo :bar", wantErr: ksa.ErrInvalidName},
		{name: "space in name", username: "system:serviceaccount:foo:bar ", wantErr: ksa.ErrInvalidName},
		{name: "no prefix", username: "foo:bar", wantErr: ksa.ErrInvalidUsername},
		{name: "prefix only", username: "system:serviceaccount:", wantErr: ksa.ErrInvalidUsername},
		{name: "dot in namespace", username: "system:serviceaccount:foo.bar:baz", wantErr: ksa.ErrInvalidName},
		{name: "upper case", username: "system:serviceaccount:Foo:bar", wantErr: ksa.ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ksa.ParseUsername(tt.username)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				require.ErrorIs(t, err, ksa.ErrInvalidUsername)
				assert.Contains(t, err.Error(), strconv.Quote(tt.username), "the error names the username")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.username, got.Username())
		})
	}
}

// TestMatchesUsername holds MatchesUsername to Kubernetes' cases
// (k8s.io/apiserver/pkg/authentication/serviceaccount).
func TestMatchesUsername(t *testing.T) {
	tests := []struct {
		name      string
		namespace string
		saName    string
		username  string
		want      bool
	}{
		{name: "match", namespace: "foo", saName: "bar", username: "system:serviceaccount:foo:bar", want: true},
		{name: "bare", namespace: "foo", saName: "bar", username: "foo"},
		{name: "prefix only", namespace: "foo", saName: "bar", username: "system:serviceaccount:"},
		{name: "namespace only", namespace: "foo", saName: "bar", username: "system:serviceaccount:foo"},
		{name: "trailing colon", namespace: "foo", saName: "bar", username: "system:serviceaccount:foo:"},
		{name: "no namespace", namespace: "foo", saName: "bar", username: "system:serviceaccount::bar"},
		{name: "name as namespace", namespace: "foo", saName: "bar", username: "system:serviceaccount:bar"},
		{name: "colon name", namespace: "foo", saName: "bar", username: ":bar"},
		{name: "no prefix", namespace: "foo", saName: "bar", username: "foo:bar"},
		{name: "empty", namespace: "foo", saName: "bar", username: ""},
		{name: "other namespace", namespace: "foo2", saName: "bar", username: "system:serviceaccount:foo:bar"},
		{name: "other name", namespace: "foo", saName: "bar2", username: "system:serviceaccount:foo:bar"},
		{name: "colon in namespace", namespace: "foo:", saName: "bar", username: "system:serviceaccount:foo:bar"},
		{name: "colon in name", namespace: "foo", saName: ":bar", username: "system:serviceaccount:foo:bar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ksa.MatchesUsername(tt.namespace, tt.saName, tt.username))
		})
	}
}
