package kubeapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/tokens"
)

var testSA = ksa.ServiceAccount{Namespace: "myns", Name: "mysvcacct", UID: "mysvcacct-uid"}

// k8sNow is the clock of Kubernetes' token manager tests.
var k8sNow = time.Unix(1514764800, 0)

// TestRequestFromSpec maps authentication/v1 TokenRequestSpec as
// kube-apiserver resolves it.
func TestRequestFromSpec(t *testing.T) {
	exp := int64(7200)
	zero := int64(0)
	tests := []struct {
		name    string
		spec    authenticationv1.TokenRequestSpec
		want    tokens.Request
		wantErr error
	}{
		{name: "empty", spec: authenticationv1.TokenRequestSpec{}, want: tokens.Request{ServiceAccount: testSA}},
		{
			name: "audiences, expiration and a pod",
			spec: authenticationv1.TokenRequestSpec{Audiences: []string{"a"}, ExpirationSeconds: &exp,
				BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: "pu"}},
			want: tokens.Request{ServiceAccount: testSA, Audiences: []string{"a"}, ExpirationSeconds: 7200,
				BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}},
		},
		{
			name: "secret without apiVersion",
			spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", Name: "s", UID: "su"}},
			want: tokens.Request{ServiceAccount: testSA, BoundObject: &tokens.BoundObject{Kind: tokens.BoundSecret, Name: "s", UID: "su"}},
		},
		{name: "explicit zero expiration", spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &zero}, wantErr: tokens.ErrInvalidRequest},
		{name: "kind is case-sensitive", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "pod", APIVersion: "v1", Name: "p"}}, wantErr: tokens.ErrInvalidRequest},
		{
			name: "validating webhook configuration with its attestation",
			spec: authenticationv1.TokenRequestSpec{Audiences: []string{"https://w"},
				BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "ValidatingWebhookConfiguration", APIVersion: "admissionregistration.k8s.io/v1", Name: "w", UID: "wu"},
				Attestations:   map[string]authenticationv1.AttestationValue{authenticationv1.AttestationAdmissionReviewAPIGroups: {"*"}}},
			want: tokens.Request{ServiceAccount: testSA, Audiences: []string{"https://w"},
				BoundObject:  &tokens.BoundObject{Kind: tokens.BoundValidatingWebhookConfiguration, Name: "w", UID: "wu"},
				Attestations: map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {"*"}}},
		},
		{name: "webhook configuration needs admissionregistration.k8s.io/v1", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "MutatingWebhookConfiguration", APIVersion: "admissionregistration.k8s.io/v1beta1", Name: "w"}}, wantErr: tokens.ErrInvalidRequest},
		{name: "group must be core", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "apps/v1", Name: "p"}}, wantErr: tokens.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kubeapi.RequestFromSpec(testSA, tt.spec)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestIsServiceAccountTokenSecret follows Kubernetes' IsServiceAccountToken
// cases .
func TestIsServiceAccountTokenSecret(t *testing.T) {
	secret := func(typ corev1.SecretType, name, uid, ns string) *corev1.Secret {
		s := &corev1.Secret{Type: typ}
		s.Namespace = ns
		s.Annotations = map[string]string{corev1.ServiceAccountNameKey: name}
		if uid != "" {
			s.Annotations[corev1.ServiceAccountUIDKey] = uid
		}
		return s
	}
	sa := ksa.ServiceAccount{Namespace: "default", Name: "default", UID: "12345"}
	tests := []struct {
		name   string
		secret *corev1.Secret
		sa     ksa.ServiceAccount
		want   bool
	}{
		{name: "match", secret: secret(corev1.SecretTypeServiceAccountToken, "default", "12345", "default"), sa: sa, want: true},
		{name: "no uid annotation", secret: secret(corev1.SecretTypeServiceAccountToken, "default", "", "default"), sa: sa, want: true},
		{name: "type mismatch", secret: secret(corev1.SecretTypeOpaque, "default", "12345", "default"), sa: sa},
		{name: "name mismatch", secret: secret(corev1.SecretTypeServiceAccountToken, "default", "12345", "default"), sa: ksa.ServiceAccount{Namespace: "default", Name: "non-default", UID: "12345"}},
		{name: "uid mismatch", secret: secret(corev1.SecretTypeServiceAccountToken, "default", "12345", "default"), sa: ksa.ServiceAccount{Namespace: "default", Name: "default", UID: "67890"}},
		{name: "namespace mismatch", secret: secret(corev1.SecretTypeServiceAccountToken, "default", "12345", "other"), sa: sa},
		{name: "nil", secret: nil, sa: sa},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, kubeapi.IsServiceAccountTokenSecret(tt.secret, tt.sa))
		})
	}
}

func TestObjectGetter(t *testing.T) {
	deleted := metav1.NewTime(time.Unix(1700000000, 0))
	podGone := apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "gone")
	boom := errors.New("connection refused")
	get := kubeapi.ObjectGetter(func(_ context.Context, kind tokens.ObjectKind, ns, name string) (metav1.Object, error) {
		switch name {
		case "live":
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u-1"}}, nil
		case "terminating":
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u-2", DeletionTimestamp: &deleted}}, nil
		case "gone":
			return nil, podGone
		case "nothing":
			return nil, nil
		case "typed nil":
			return (*corev1.Pod)(nil), nil
		}
		return nil, boom
	})
	for _, tc := range []struct {
		name         string
		object       string
		want         tokens.LiveObject
		wantNotFound bool
		wantErr      error
	}{
		{name: "live object", object: "live", want: tokens.LiveObject{UID: "u-1"}},
		{name: "being deleted", object: "terminating", want: tokens.LiveObject{UID: "u-2", DeletionTimestamp: deleted.Time}},
		{name: "NotFound status", object: "gone", wantNotFound: true, wantErr: podGone},
		{name: "other error", object: "broken", wantErr: boom},
		{name: "no object and no error", object: "nothing"},
		{name: "typed nil and no error", object: "typed nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := get.GetObject(t.Context(), tokens.KindPod, "ns", tc.object)
			if tc.want.UID != "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.wantNotFound, errors.Is(err, tokens.ErrObjectNotFound))
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			}
		})
	}
	assert.NoError(t, kubeapi.NotFound(nil))
}

func TestLegacySecret(t *testing.T) {
	deleted := metav1.NewTime(time.Unix(1700000000, 0))
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{UID: "s-1", DeletionTimestamp: &deleted, Labels: map[string]string{tokens.LegacyInvalidSinceLabel: "2026-01-01"}},
		Data:       map[string][]byte{corev1.ServiceAccountTokenKey: []byte("raw")},
	}
	assert.Equal(t, tokens.LegacySecret{UID: "s-1", Token: []byte("raw"), DeletionTimestamp: deleted.Time, InvalidSince: "2026-01-01"}, kubeapi.LegacySecret(secret))
}
