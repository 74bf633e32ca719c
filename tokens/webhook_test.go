package tokens_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/jsonx"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

const webhookAudience = "https://gmsa-webhook.ksa-system.svc:443/validate"

func webhookRequest(kind tokens.BoundKind, group string) tokens.Request {
	return tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "kube-system", Name: "webhook-auth", UID: "sa-uid"},
		Audiences:      []string{webhookAudience},
		BoundObject:    &tokens.BoundObject{Kind: kind, Name: "gmsa", UID: "config-uid"},
		Attestations:   map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {group}},
	}
}

// TestMintWebhookBound: the claims of a token bound to each webhook
// configuration kind, byte for byte as kube-apiserver v1.37.2 writes them
// (interop/serviceaccount compares with Kubernetes' own code), with the
// lifetime shortened to ten minutes and no warning.
func TestMintWebhookBound(t *testing.T) {
	tests := []struct {
		name string
		kind tokens.BoundKind
		exp  int64
		want string
	}{
		{name: "validating, default lifetime", kind: tokens.BoundValidatingWebhookConfiguration,
			want: `{"aud":["` + webhookAudience + `"],"exp":1514765400,"iat":1514764800,"iss":"` + testIssuer + `","jti":"fixed","kubernetes.io":{"attestations":{"admissionReviewAPIGroups":["*"]},"namespace":"kube-system","serviceaccount":{"name":"webhook-auth","uid":"sa-uid"},"validatingwebhookconfiguration":{"name":"gmsa","uid":"config-uid"}},"nbf":1514764800,"sub":"system:serviceaccount:kube-system:webhook-auth"}`},
		{name: "mutating, a day asked for", kind: tokens.BoundMutatingWebhookConfiguration, exp: 86400,
			want: `{"aud":["` + webhookAudience + `"],"exp":1514765400,"iat":1514764800,"iss":"` + testIssuer + `","jti":"fixed","kubernetes.io":{"attestations":{"admissionReviewAPIGroups":["*"]},"mutatingwebhookconfiguration":{"name":"gmsa","uid":"config-uid"},"namespace":"kube-system","serviceaccount":{"name":"webhook-auth","uid":"sa-uid"}},"nbf":1514764800,"sub":"system:serviceaccount:kube-system:webhook-auth"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustMinter(t, testkeys.K8sEC(), func(c *tokens.MinterConfig) { c.MaxExpiration = 2 * time.Hour })
			req := webhookRequest(tt.kind, tokens.AllAPIGroups)
			req.ExpirationSeconds = tt.exp
			tok, err := m.Mint(t.Context(), req)
			require.NoError(t, err)
			assert.Equal(t, tt.want, payloadOf(t, tok.Raw))
			assert.Equal(t, k8sNow.Add(10*time.Minute), tok.ExpirationTimestamp)
			assert.Empty(t, tok.Warnings)
		})
	}
}

// TestMintWebhookRefused: TokenRequest's rules for webhook-bound requests.
func TestMintWebhookRefused(t *testing.T) {
	tests := []struct {
		name      string
		mod       func(*tokens.Request)
		wantField string
	}{
		{name: "no audience", mod: func(r *tokens.Request) { r.Audiences = nil }, wantField: "spec.audiences"},
		{name: "two audiences", mod: func(r *tokens.Request) { r.Audiences = append(r.Audiences, "other") }, wantField: "spec.audiences"},
		{name: "API audience", mod: func(r *tokens.Request) { r.Audiences = []string{testAudience} }, wantField: "spec.audiences"},
		{name: "no attestation", mod: func(r *tokens.Request) { r.Attestations = nil }, wantField: "spec.attestations"},
		{name: "unknown attestation", mod: func(r *tokens.Request) { r.Attestations = map[string][]string{"other": {"x"}} }, wantField: "spec.attestations"},
		{name: "two attestations", mod: func(r *tokens.Request) { r.Attestations["other"] = []string{"x"} }, wantField: "spec.attestations"},
		{name: "two groups", mod: func(r *tokens.Request) {
			r.Attestations[tokens.AttestationAdmissionReviewAPIGroups] = []string{"apps", "batch"}
		}, wantField: "spec.attestations[admissionReviewAPIGroups]"},
		{name: "core group", mod: func(r *tokens.Request) {
			r.Attestations[tokens.AttestationAdmissionReviewAPIGroups] = []string{""}
		}, wantField: "spec.attestations[admissionReviewAPIGroups][0]"},
		{name: "not a group", mod: func(r *tokens.Request) {
			r.Attestations[tokens.AttestationAdmissionReviewAPIGroups] = []string{"Apps_"}
		}, wantField: "spec.attestations[admissionReviewAPIGroups][0]"},
		{name: "attestation on a pod binding", mod: func(r *tokens.Request) {
			r.BoundObject = &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "u"}
		}, wantField: "spec.attestations"},
		{name: "attestation without binding", mod: func(r *tokens.Request) { r.BoundObject = nil }, wantField: "spec.attestations"},
		{name: "node with a webhook binding", mod: func(r *tokens.Request) { r.Node = &ksa.ObjectRef{Name: "n"} }, wantField: "spec.boundObjectRef"},
	}
	m := mustMinter(t, testkeys.K8sEC())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := webhookRequest(tokens.BoundValidatingWebhookConfiguration, "apps")
			tt.mod(&req)
			_, err := m.Mint(t.Context(), req)
			require.ErrorIs(t, err, tokens.ErrInvalidRequest)
			var re *tokens.RequestError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tt.wantField, re.Field)
		})
	}
}

// TestWebhookClaimOrder: every member of kubernetes.io written at once comes
// out sorted by name, as go-jose writes them, whatever the claim names are
// renamed to.
func TestWebhookClaimOrder(t *testing.T) {
	ref := &ksa.ObjectRef{Name: "n", UID: "u"}
	c := tokens.Claims{Kubernetes: &tokens.KubernetesClaims{
		Namespace: "ns", ServiceAccount: *ref, Pod: ref, Secret: ref, Node: ref,
		ValidatingWebhookConfiguration: ref, MutatingWebhookConfiguration: ref,
		Attestations: map[string][]string{"b": {"1"}, "a": nil}, WarnAfter: k8sNow,
	}}
	var k struct {
		Kubernetes json.RawMessage `json:"kubernetes.io"`
	}
	require.NoError(t, json.Unmarshal(c.AppendJSON(nil), &k))
	var names []string
	r := jsonx.NewReader(k.Kubernetes, 8)
	obj, err := r.Object()
	require.NoError(t, err)
	for {
		name, ok, err := obj.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		names = append(names, string(name))
		require.NoError(t, r.Skip())
	}
	assert.Len(t, names, 9)
	assert.True(t, slices.IsSorted(names), "%q", names)
	assert.Contains(t, string(k.Kubernetes), `"attestations":{"a":null,"b":["1"]}`)
}

// TestValidateWebhookBound: a webhook-bound token validates with its
// configuration live, its identity carrying the binding and the attested
// group; it is refused once the configuration is gone or replaced, and
// claims Kubernetes never mints are refused.
func TestValidateWebhookBound(t *testing.T) {
	key := testkeys.K8sEC()
	m := mustMinter(t, key)
	live := func() *objectStore {
		return newObjectStore().
			add(tokens.KindServiceAccount, "kube-system", "webhook-auth", "sa-uid").
			add(tokens.KindValidatingWebhookConfiguration, "", "gmsa", "config-uid").
			add(tokens.KindMutatingWebhookConfiguration, "", "gmsa", "config-uid")
	}
	validator := func(s *objectStore) *tokens.Validator {
		return mustValidator(t, mustSource(t, key.Public()), func(c *tokens.ValidatorConfig) {
			c.Audiences = []string{webhookAudience}
			c.SkipObjectCheck = false
			c.Objects = s
		})
	}
	for _, kind := range []tokens.BoundKind{tokens.BoundValidatingWebhookConfiguration, tokens.BoundMutatingWebhookConfiguration} {
		t.Run(string(kind), func(t *testing.T) {
			tok, err := m.Mint(t.Context(), webhookRequest(kind, "apps"))
			require.NoError(t, err)
			res, err := validator(live()).Validate(t.Context(), tok.Raw)
			require.NoError(t, err)
			gotKind, ref, ok := res.Claims.Kubernetes.WebhookBinding()
			require.True(t, ok)
			assert.Equal(t, kind, gotKind)
			assert.Equal(t, ksa.ObjectRef{Name: "gmsa", UID: "config-uid"}, ref)
			group, ok := res.Claims.Kubernetes.AdmissionReviewAPIGroup()
			assert.True(t, ok)
			assert.Equal(t, "apps", group)
			assert.Equal(t, []string{"apps"}, res.Identity.AdmissionReviewAPIGroups)
			extra := res.UserInfo().Extra
			if kind == tokens.BoundValidatingWebhookConfiguration {
				assert.Equal(t, []string{"gmsa"}, extra[ksa.ExtraValidatingWebhookConfigurationName])
			} else {
				assert.Equal(t, []string{"config-uid"}, extra[ksa.ExtraMutatingWebhookConfigurationUID])
			}

			objKind := tokens.ObjectKind(kind)
			gone := live()
			delete(gone.objects, objectKey(objKind, "", "gmsa"))
			_, err = validator(gone).Validate(t.Context(), tok.Raw)
			require.ErrorIs(t, err, tokens.ErrBoundObjectNotFound)
			require.ErrorIs(t, err, tokens.ErrInvalidated)

			_, err = validator(live().add(objKind, "", "gmsa", "other-uid")).Validate(t.Context(), tok.Raw)
			require.ErrorIs(t, err, tokens.ErrBoundObjectUIDMismatch)
			var oe *tokens.ObjectError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, objKind, oe.Kind)

			_, err = validator(live().deleting(objKind, "", "gmsa", k8sNow.Add(-2*time.Minute))).Validate(t.Context(), tok.Raw)
			require.ErrorIs(t, err, tokens.ErrBoundObjectDeleted)
		})
	}

	ref := &ksa.ObjectRef{Name: "gmsa", UID: "config-uid"}
	apps := map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {"apps"}}
	claims := []struct {
		name    string
		k       tokens.KubernetesClaims
		wantErr error
	}{
		{name: "both kinds", k: tokens.KubernetesClaims{ValidatingWebhookConfiguration: ref, MutatingWebhookConfiguration: ref, Attestations: apps}, wantErr: tokens.ErrInvalidClaim},
		{name: "with a pod", k: tokens.KubernetesClaims{ValidatingWebhookConfiguration: ref, Pod: ref, Attestations: apps}, wantErr: tokens.ErrInvalidClaim},
		{name: "no uid", k: tokens.KubernetesClaims{ValidatingWebhookConfiguration: &ksa.ObjectRef{Name: "gmsa"}, Attestations: apps}, wantErr: tokens.ErrInvalidClaim},
		{name: "no attestation", k: tokens.KubernetesClaims{ValidatingWebhookConfiguration: ref}, wantErr: tokens.ErrMissingClaim},
		{name: "null attestation", k: tokens.KubernetesClaims{ValidatingWebhookConfiguration: ref, Attestations: map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: nil}}, wantErr: tokens.ErrInvalidClaim},
		{name: "two groups", k: tokens.KubernetesClaims{ValidatingWebhookConfiguration: ref, Attestations: map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {"a", "b"}}}, wantErr: tokens.ErrInvalidClaim},
		{name: "other attestation", k: tokens.KubernetesClaims{ValidatingWebhookConfiguration: ref, Attestations: map[string][]string{"other": {"a"}}}, wantErr: tokens.ErrInvalidClaim},
		{name: "empty group", k: tokens.KubernetesClaims{MutatingWebhookConfiguration: ref, Attestations: map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {""}}}, wantErr: tokens.ErrInvalidClaim},
		{name: "attestation on a pod token", k: tokens.KubernetesClaims{Pod: ref, Attestations: apps}, wantErr: tokens.ErrInvalidClaim},
	}
	for _, tt := range claims {
		t.Run(tt.name, func(t *testing.T) {
			k := tt.k
			k.Namespace, k.ServiceAccount = "kube-system", ksa.ObjectRef{Name: "webhook-auth", UID: "sa-uid"}
			raw, err := m.Sign(t.Context(), &tokens.Claims{Issuer: testIssuer, Audience: []string{webhookAudience}, Expiry: k8sNow.Add(10 * time.Minute), Kubernetes: &k})
			require.NoError(t, err)
			s := live().add(tokens.KindPod, "kube-system", "gmsa", "config-uid")
			_, err = validator(s).Validate(t.Context(), raw)
			require.ErrorIs(t, err, tt.wantErr)
		})
	}
}

// TestDescribeWebhook explains webhook-bound tokens and nothing else.
func TestDescribeWebhook(t *testing.T) {
	ref := &ksa.ObjectRef{Name: "gmsa", UID: "u"}
	tests := []struct {
		name string
		k    *tokens.KubernetesClaims
		want string
	}{
		{name: "all groups", k: &tokens.KubernetesClaims{ValidatingWebhookConfiguration: ref, Attestations: map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {"*"}}},
			want: `for calling the admission webhooks of ValidatingWebhookConfiguration "gmsa" (uid "u"), whose URL is the audience, with AdmissionReviews about resources of any API group (Kubernetes 1.37, alpha)`},
		{name: "one group", k: &tokens.KubernetesClaims{MutatingWebhookConfiguration: ref, Attestations: map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {"apps"}}},
			want: `for calling the admission webhooks of MutatingWebhookConfiguration "gmsa" (uid "u"), whose URL is the audience, with AdmissionReviews about resources of API group "apps" (Kubernetes 1.37, alpha)`},
		{name: "no attestation", k: &tokens.KubernetesClaims{MutatingWebhookConfiguration: ref},
			want: `for calling the admission webhooks of MutatingWebhookConfiguration "gmsa" (uid "u"), whose URL is the audience, with AdmissionReviews about no API group (the attestation is missing or holds several) (Kubernetes 1.37, alpha)`},
		{name: "a pod's token", k: &tokens.KubernetesClaims{Pod: ref}},
		{name: "nil", k: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.k.DescribeWebhook())
		})
	}
}
