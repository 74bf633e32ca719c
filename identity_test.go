package ksa_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa"
)

// TestUserInfo holds Identity.UserInfo to Kubernetes' cases
// (k8s.io/apiserver/pkg/authentication/serviceaccount).
func TestUserInfo(t *testing.T) {
	sa := ksa.ServiceAccount{Namespace: "ns", Name: "name", UID: "uid"}
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:ns"}
	tests := []struct {
		name      string
		id        ksa.Identity
		wantExtra map[string][]string
	}{
		{name: "service account only", id: ksa.Identity{ServiceAccount: sa}},
		{name: "pod", id: ksa.Identity{ServiceAccount: sa, Pod: ksa.ObjectRef{Name: "test", UID: "uid"}},
			wantExtra: map[string][]string{ksa.ExtraPodName: {"test"}, ksa.ExtraPodUID: {"uid"}}},
		{name: "pod without uid", id: ksa.Identity{ServiceAccount: sa, Pod: ksa.ObjectRef{Name: "test"}}},
		{name: "node", id: ksa.Identity{ServiceAccount: sa, Node: ksa.ObjectRef{Name: "test", UID: "uid"}},
			wantExtra: map[string][]string{ksa.ExtraNodeName: {"test"}, ksa.ExtraNodeUID: {"uid"}}},
		{name: "node name only", id: ksa.Identity{ServiceAccount: sa, Node: ksa.ObjectRef{Name: "test"}},
			wantExtra: map[string][]string{ksa.ExtraNodeName: {"test"}}},
		{name: "node uid only", id: ksa.Identity{ServiceAccount: sa, Node: ksa.ObjectRef{UID: "uid"}}},
		{name: "credential id", id: ksa.Identity{ServiceAccount: sa, CredentialID: ksa.CredentialID("abc")},
			wantExtra: map[string][]string{ksa.ExtraCredentialID: {"JTI=abc"}}},
		{name: "validating webhook configuration", id: ksa.Identity{ServiceAccount: sa, ValidatingWebhookConfiguration: ksa.ObjectRef{Name: "gmsa", UID: "vwc"}, AdmissionReviewAPIGroups: []string{"*"}},
			wantExtra: map[string][]string{ksa.ExtraValidatingWebhookConfigurationName: {"gmsa"}, ksa.ExtraValidatingWebhookConfigurationUID: {"vwc"}, ksa.ExtraAdmissionReviewAPIGroups: {"*"}}},
		{name: "mutating webhook configuration", id: ksa.Identity{ServiceAccount: sa, MutatingWebhookConfiguration: ksa.ObjectRef{Name: "gmsa", UID: "mwc"}, AdmissionReviewAPIGroups: []string{"apps"}},
			wantExtra: map[string][]string{ksa.ExtraMutatingWebhookConfigurationName: {"gmsa"}, ksa.ExtraMutatingWebhookConfigurationUID: {"mwc"}, ksa.ExtraAdmissionReviewAPIGroups: {"apps"}}},
		{name: "webhook configuration without uid", id: ksa.Identity{ServiceAccount: sa, MutatingWebhookConfiguration: ksa.ObjectRef{Name: "gmsa"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := tt.id.UserInfo()
			assert.Equal(t, "system:serviceaccount:ns:name", info.Username)
			assert.Equal(t, "uid", info.UID)
			assert.Equal(t, groups, info.Groups)
			assert.Equal(t, tt.wantExtra, info.Extra)
		})
	}
	assert.Empty(t, ksa.CredentialID(""))
}
