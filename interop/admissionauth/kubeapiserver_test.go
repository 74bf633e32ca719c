package admissionauth_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/interop/clientgo"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

const (
	gate = "APIServerWebhookAuthenticationToken"
	// webhookURL is the GMSA webhook's Service URL without path; the
	// configurations register its /mutate and /validate paths.
	webhookURL = "https://gmsa-webhook.ksa-system.svc:443"
)

var caller = ksa.ServiceAccount{Namespace: "kube-system", Name: "webhook-auth"}

// podReview is an AdmissionReview about a pod without GMSA fields: the
// webhook allows it.
const podReview = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",
"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},
"operation":"CREATE","namespace":"web","userInfo":{"username":"system:serviceaccount:kube-system:replicaset-controller"},
"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"frontend-0","namespace":"web"},
"spec":{"serviceAccountName":"frontend","containers":[{"name":"app","image":"app"}]}}}}`

func service(path string) admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
		Namespace: "ksa-system", Name: "gmsa-webhook", Path: &path}}
}

// setUp makes the caller's service account, its permission to attest
// every API group, and the webhook configurations: gmsa-webhook
// (validating and mutating) on the GMSA webhook's Service, gmsa-webhook-2
// on the same Service, other-webhook on another URL. None intercepts
// anything kube-apiserver does here (failurePolicy Ignore, no pods made).
func setUp(t *testing.T, cs kubernetes.Interface) map[string]string {
	ctx := t.Context()
	_, err := cs.CoreV1().ServiceAccounts(caller.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: caller.Name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "webhook-auth-attest"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{tokens.AttestationAdmissionReviewAPIGroups},
			ResourceNames: []string{tokens.AllAPIGroups}, Verbs: []string{"attest"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "webhook-auth-attest"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "webhook-auth-attest"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: caller.Namespace, Name: caller.Name}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	ignore, none := admissionregistrationv1.Ignore, admissionregistrationv1.SideEffectClassNone
	rules := []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}
	uids := map[string]string{}
	for _, v := range []struct{ name, url, path string }{{"gmsa-webhook", "", "/validate"}, {"gmsa-webhook-2", "", "/validate"}, {"other-webhook", "https://other.example/validate", ""}} {
		cc := service(v.path)
		if v.url != "" {
			cc = admissionregistrationv1.WebhookClientConfig{URL: &v.url}
		}
		vwc, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: v.name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "validate.gmsa.ksa.dev", ClientConfig: cc, Rules: rules,
				FailurePolicy: &ignore, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		uids["validating/"+v.name] = string(vwc.UID)
	}
	mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "gmsa-webhook"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "mutate.gmsa.ksa.dev", ClientConfig: service("/mutate"), Rules: rules,
			FailurePolicy: &ignore, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	uids["mutating/gmsa-webhook"] = string(mwc.UID)
	return uids
}

// requestToken asks kube-apiserver for the caller's token bound to a
// webhook configuration, for an audience, attesting all API groups.
func requestToken(ctx context.Context, cs kubernetes.Interface, kind, name, audience string) (*authenticationv1.TokenRequest, error) {
	exp := int64(3600)
	return cs.CoreV1().ServiceAccounts(caller.Namespace).CreateToken(ctx, caller.Name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         []string{audience},
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: kind, APIVersion: "admissionregistration.k8s.io/v1", Name: name},
		Attestations:      map[string]authenticationv1.AttestationValue{tokens.AttestationAdmissionReviewAPIGroups: {tokens.AllAPIGroups}},
	}}, metav1.CreateOptions{})
}

// gmsaWebhook is the GMSA webhook's handler, with the caller check when
// check is set: tokens of the control plane's issuer and keys, the live
// configuration looked up.
func gmsaWebhook(t *testing.T, cp *controlplane.ControlPlane, check bool, now func() time.Time) http.Handler {
	src, err := credspec.NewStaticSourceJSON(map[string]string{})
	require.NoError(t, err)
	authz := credspec.AuthorizerFunc(func(context.Context, credspec.UseRequest) (credspec.Decision, error) { return credspec.Decision{}, nil })
	exp, err := credspec.NewExpander(credspec.ExpanderConfig{Source: src})
	require.NoError(t, err)
	val, err := credspec.NewValidator(credspec.ValidatorConfig{Source: src, Authorizer: authz})
	require.NoError(t, err)
	cfg := credspec.HandlerConfig{Expander: exp, Validator: val}
	if check {
		var keys []jwks.Key
		for _, pub := range cp.VerificationKeys {
			k, err := jwks.NewKey(pub)
			require.NoError(t, err)
			keys = append(keys, k)
		}
		source, err := jwks.NewStaticSource(keys...)
		require.NoError(t, err)
		v, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: cp.Issuers, Keys: source,
			Audiences: []string{webhookURL + credspec.ValidatePath}, Objects: clientgo.ObjectGetter(cp.Clientset()), Now: now})
		require.NoError(t, err)
		cfg.MutateCallers, cfg.ValidateCallers, err = credspec.CallersConfig{Tokens: v.ValidateFor, URL: webhookURL,
			Configuration: "gmsa-webhook", ServiceAccounts: []ksa.ServiceAccount{caller}}.Verifiers()
		require.NoError(t, err)
	}
	h, err := credspec.NewHandler(cfg)
	require.NoError(t, err)
	return h
}

// call posts the pod review to the webhook with an Authorization header
// (none when empty) and returns the status and whether the review was
// allowed.
func call(t *testing.T, h http.Handler, path, auth string) (int, bool) {
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, strings.NewReader(podReview))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Logf("%s %d: %s", path, rec.Code, strings.TrimSpace(rec.Body.String()))
		return rec.Code, false
	}
	var out struct {
		Response struct {
			Allowed bool `json:"allowed"`
		} `json:"response"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	return rec.Code, out.Response.Allowed
}

// TestWebhookTokens: on v1.37.2 with the gate on, kube-apiserver mints the
// caller's tokens bound to the webhook's configurations, ten minutes long,
// byte for byte as ksa's minter; the GMSA webhook admits with them and
// refuses a token bound to another configuration, for another audience,
// expired, missing, or bound to a configuration since deleted; TokenReview
// agrees. On v1.36.3 no such token is minted, and the webhook without the
// check works unchanged.
func TestWebhookTokens(t *testing.T) {
	controlplane.EachVersion(t, func(t *testing.T, version string) {
		cp := controlplane.StartForTest(t, controlplane.Config{Version: version, FeatureGates: featureGates(version)})
		cs := cp.Clientset()
		ctx := t.Context()
		uids := setUp(t, cs)
		validateURL := webhookURL + credspec.ValidatePath

		if version != "v1.37.2" {
			_, err := requestToken(ctx, cs, "ValidatingWebhookConfiguration", "gmsa-webhook", validateURL)
			require.True(t, apierrors.IsBadRequest(err), "v1.36 binds no token to a webhook configuration: %v", err)
			code, allowed := call(t, gmsaWebhook(t, cp, false, nil), credspec.ValidatePath, "")
			assert.Equal(t, http.StatusOK, code)
			assert.True(t, allowed, "the webhook works unchanged without tokens")
			return
		}

		before := time.Now()
		tr, err := requestToken(ctx, cs, "ValidatingWebhookConfiguration", "gmsa-webhook", validateURL)
		require.NoError(t, err)
		good := tr.Status.Token
		assert.WithinDuration(t, before.Add(10*time.Minute), tr.Status.ExpirationTimestamp.Time, 5*time.Second, "shortened to ten minutes")
		mtr, err := requestToken(ctx, cs, "MutatingWebhookConfiguration", "gmsa-webhook", webhookURL+credspec.MutatePath)
		require.NoError(t, err)

		// With the "*" attestation, v1.37.2 holds the audience to none of
		// the configuration's webhooks: a token bound to gmsa-webhook for
		// another webhook's URL is minted. Only the webhook's own audience
		// check keeps it out. kube-apiserver's own audiences are refused.
		stray, err := requestToken(ctx, cs, "ValidatingWebhookConfiguration", "gmsa-webhook", "https://other.example/validate")
		require.NoError(t, err, "v1.37.2 does not check the audience of a \"*\" token")
		_, err = requestToken(ctx, cs, "ValidatingWebhookConfiguration", "gmsa-webhook", cp.APIAudiences[0])
		require.True(t, apierrors.IsBadRequest(err), "%v", err)

		// ksa mints the same bytes.
		sameBytes(t, cp, good, uids["validating/gmsa-webhook"])

		h := gmsaWebhook(t, cp, true, nil)
		code, allowed := call(t, h, credspec.ValidatePath, good)
		assert.Equal(t, http.StatusOK, code)
		assert.True(t, allowed, "kube-apiserver's token admits")
		code, allowed = call(t, h, credspec.MutatePath, mtr.Status.Token)
		assert.Equal(t, http.StatusOK, code)
		assert.True(t, allowed)

		other, err := requestToken(ctx, cs, "ValidatingWebhookConfiguration", "gmsa-webhook-2", validateURL)
		require.NoError(t, err)
		elsewhere, err := requestToken(ctx, cs, "ValidatingWebhookConfiguration", "other-webhook", "https://other.example/validate")
		require.NoError(t, err)
		for _, c := range []struct {
			name, path, token string
			want              int
		}{
			{"bound to another configuration", credspec.ValidatePath, other.Status.Token, http.StatusForbidden},
			{"for another audience", credspec.ValidatePath, elsewhere.Status.Token, http.StatusUnauthorized},
			{"bound to this configuration, for another audience", credspec.ValidatePath, stray.Status.Token, http.StatusUnauthorized},
			{"the validating token at /mutate", credspec.MutatePath, good, http.StatusUnauthorized},
			{"missing", credspec.ValidatePath, "", http.StatusUnauthorized},
		} {
			code, _ := call(t, h, c.path, c.token)
			assert.Equal(t, c.want, code, c.name)
		}
		later := gmsaWebhook(t, cp, true, func() time.Time { return time.Now().Add(12 * time.Minute) })
		code, _ = call(t, later, credspec.ValidatePath, good)
		assert.Equal(t, http.StatusUnauthorized, code, "expired")

		// TokenReview agrees, and derives the user ksa derives.
		review, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{
			Token: good, Audiences: []string{validateURL}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		require.True(t, review.Status.Authenticated, review.Status.Error)
		claims, err := tokens.ParseUnverified(good)
		require.NoError(t, err)
		info := claims.Identity().UserInfo()
		assert.Equal(t, review.Status.User.Username, info.Username)
		for k, v := range info.Extra {
			assert.Equal(t, v, []string(review.Status.User.Extra[k]), k)
		}
		assert.Equal(t, []string{"gmsa-webhook"}, []string(review.Status.User.Extra[ksa.ExtraValidatingWebhookConfigurationName]))
		assert.Equal(t, []string{"*"}, []string(review.Status.User.Extra[ksa.ExtraAdmissionReviewAPIGroups]))

		// The configuration deleted: TokenReview and the webhook refuse
		// (the mutating token, which TokenReview has not cached).
		require.NoError(t, cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, "gmsa-webhook", metav1.DeleteOptions{}))
		review, err = cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{
			Token: mtr.Status.Token, Audiences: []string{webhookURL + credspec.MutatePath}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.False(t, review.Status.Authenticated)
		t.Logf("TokenReview: %s", review.Status.Error)
		code, _ = call(t, h, credspec.MutatePath, mtr.Status.Token)
		assert.Equal(t, http.StatusUnauthorized, code, "bound to a deleted configuration")
		require.NoError(t, cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "gmsa-webhook", metav1.DeleteOptions{}))
		code, _ = call(t, h, credspec.ValidatePath, good)
		assert.Equal(t, http.StatusUnauthorized, code, "bound to a deleted configuration")
	})
}

func featureGates(version string) map[string]bool {
	if version == "v1.37.2" {
		return map[string]bool{gate: true}
	}
	return nil
}

// sameBytes mints with ksa what kube-apiserver minted (its iat and jti, the
// control plane's key) and compares: the payload always, the whole token
// with RSA.
func sameBytes(t *testing.T, cp *controlplane.ControlPlane, raw, configUID string) {
	parts := strings.Split(raw, ".")
	require.Len(t, parts, 3)
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	claims, err := tokens.ParseClaims(payload)
	require.NoError(t, err)
	k := claims.Kubernetes
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: cp.Issuers[0], Signer: cp.SigningKey, APIAudiences: cp.APIAudiences,
		Now: func() time.Time { return claims.IssuedAt }, NewJTI: func() string { return claims.ID }})
	require.NoError(t, err)
	tok, err := m.Mint(t.Context(), tokens.Request{
		ServiceAccount:    ksa.ServiceAccount{Namespace: k.Namespace, Name: k.ServiceAccount.Name, UID: k.ServiceAccount.UID},
		Audiences:         claims.Audience,
		ExpirationSeconds: 3600,
		BoundObject:       &tokens.BoundObject{Kind: tokens.BoundValidatingWebhookConfiguration, Name: "gmsa-webhook", UID: configUID},
		Attestations:      map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {tokens.AllAPIGroups}},
	})
	require.NoError(t, err)
	mine := strings.Split(tok.Raw, ".")
	got, _ := base64.RawURLEncoding.DecodeString(mine[1])
	assert.Equal(t, string(payload), string(got), "payload")
	assert.True(t, bytes.Equal([]byte(raw), []byte(tok.Raw)), "whole token (RSA)")
}
