package registrytoken_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credprovider/registrytoken"
)

func TestParseScope(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  registrytoken.Scope
		error string
	}{
		{name: "pull", in: "repository:team/app:pull",
			want: registrytoken.Scope{Type: "repository", Name: "team/app", Actions: []string{"pull"}}},
		{name: "pull and push, duplicates dropped", in: "repository:a:pull,push,pull",
			want: registrytoken.Scope{Type: "repository", Name: "a", Actions: []string{"pull", "push"}}},
		{name: "class", in: "repository(plugin):a/b:pull",
			want: registrytoken.Scope{Type: "repository", Class: "plugin", Name: "a/b", Actions: []string{"pull"}}},
		{name: "catalog", in: "registry:catalog:*",
			want: registrytoken.Scope{Type: "registry", Name: "catalog", Actions: []string{"*"}}},
		{name: "separators", in: "repository:a.b/c__d/e---f/g_h:pull",
			want: registrytoken.Scope{Type: "repository", Name: "a.b/c__d/e---f/g_h", Actions: []string{"pull"}}},
		{name: "longest name", in: "repository:" + strings.Repeat("a", registrytoken.MaxNameBytes) + ":pull",
			want: registrytoken.Scope{Type: "repository", Name: strings.Repeat("a", registrytoken.MaxNameBytes), Actions: []string{"pull"}}},
		{name: "name too long", in: "repository:" + strings.Repeat("a", registrytoken.MaxNameBytes+1) + ":pull", error: "over 255 bytes"},
		{name: "two parts", in: "repository:pull", error: "want type:name:actions"},
		{name: "no colon", in: "repository", error: "want type:name:actions"},
		{name: "empty name", in: "repository::pull", error: "the name is empty"},
		{name: "upper case name", in: "repository:Team/app:pull", error: "not a repository path"},
		{name: "host in name", in: "repository:reg:5000/app:pull", error: "not a repository path"},
		{name: "empty component", in: "repository:a//b:pull", error: "not a repository path"},
		{name: "trailing separator", in: "repository:a-:pull", error: "not a repository path"},
		{name: "triple underscore", in: "repository:a___b:pull", error: "not a repository path"},
		{name: "empty action", in: "repository:a:pull,", error: "an action is not"},
		{name: "no actions", in: "repository:a:", error: "an action is not"},
		{name: "upper action", in: "repository:a:PULL", error: "an action is not"},
		{name: "too many actions", in: "repository:a:a,b,c,d,e,f,g,h,i", error: "over 8 actions"},
		{name: "bad type", in: "Repo:a:pull", error: "the type is not"},
		{name: "unbalanced class", in: "repository(x:a:pull", error: "unbalanced"},
		{name: "empty class", in: "repository():a:pull", error: "the class is not"},
		{name: "bad registry name", in: "registry:cat/alog:*", error: "the name is not lowercase"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := registrytoken.ParseScope(tt.in)
			if tt.error != "" {
				require.ErrorIs(t, err, registrytoken.ErrBadRequest)
				assert.Contains(t, err.Error(), tt.error)
				assert.True(t, strings.HasPrefix(err.Error(), "registrytoken: bad token request: malformed scope: "), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestReadRequest(t *testing.T) {
	tests := []struct {
		name   string
		query  string
		scopes []string
		error  error
	}{
		{name: "one scope", query: "service=r&scope=repository:a:pull", scopes: []string{"repository:a:pull"}},
		{name: "no scope (login)", query: "service=r&account=x"},
		{name: "repeated and space-separated", query: "service=r&scope=repository:a:pull&scope=repository:b:pull+repository:c:push",
			scopes: []string{"repository:a:pull", "repository:b:pull", "repository:c:push"}},
		{name: "no service", query: "scope=repository:a:pull", error: registrytoken.ErrBadRequest},
		{name: "two services", query: "service=r&service=s", error: registrytoken.ErrBadRequest},
		{name: "bad escape", query: "service=%zz", error: registrytoken.ErrBadRequest},
		{name: "bad scope", query: "service=r&scope=x", error: registrytoken.ErrBadRequest},
		{name: "max scopes", query: "service=r" + strings.Repeat("&scope=repository:a:pull", registrytoken.MaxScopes),
			scopes: repeat("repository:a:pull", registrytoken.MaxScopes)},
		{name: "too many scopes", query: "service=r" + strings.Repeat("&scope=repository:a:pull", registrytoken.MaxScopes+1), error: registrytoken.ErrBadRequest},
		{name: "query at the limit", query: "service=r&x=" + strings.Repeat("a", registrytoken.MaxQueryBytes-len("service=r&x="))},
		{name: "query over the limit", query: "service=r&x=" + strings.Repeat("a", registrytoken.MaxQueryBytes-len("service=r&x=")+1), error: registrytoken.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := registrytoken.ReadRequest(tt.query)
			if tt.error != nil {
				require.ErrorIs(t, err, tt.error)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "r", got.Service)
			var scopes []string
			for _, s := range got.Scopes {
				scopes = append(scopes, s.String())
			}
			assert.Equal(t, tt.scopes, scopes)
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
