package extsigner_test

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// liveObjects is Kubernetes' ServiceAccountTokenGetter over the objects
// kubeClaims binds: the service account, its pod and the pod's node.
type liveObjects struct{}

func (liveObjects) GetServiceAccount(_ context.Context, ns, name string) (*v1.ServiceAccount, error) {
	return &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "sa-uid"}}, nil
}

func (liveObjects) GetPod(_ context.Context, ns, name string) (*v1.Pod, error) {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "pod-uid"}, Spec: v1.PodSpec{ServiceAccountName: "mysvcacct", NodeName: "mynode"}}, nil
}

func (liveObjects) GetSecret(_ context.Context, ns, name string) (*v1.Secret, error) {
	return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("secret-uid")}}, nil
}

func (liveObjects) GetNode(_ context.Context, name string) (*v1.Node, error) {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "node-uid"}}, nil
}

// GetValidatingWebhookConfiguration and GetMutatingWebhookConfiguration
// complete the getter of Kubernetes 1.37, whose tokens may be bound to a
// webhook configuration; none here are.
func (liveObjects) GetValidatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "validatingwebhookconfigurations"}, name)
}

func (liveObjects) GetMutatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "mutatingwebhookconfigurations"}, name)
}
