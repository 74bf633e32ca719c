package serviceaccount_test

import (
	"context"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/tokens"
)

// store holds the live objects both validators see: it is Kubernetes'
// ServiceAccountTokenGetter and ksa's ObjectGetter over the same data.
type store struct {
	serviceAccounts map[string]*v1.ServiceAccount
	pods            map[string]*v1.Pod
	secrets         map[string]*v1.Secret
	nodes           map[string]*v1.Node
	validating      map[string]*admissionregistrationv1.ValidatingWebhookConfiguration
	mutating        map[string]*admissionregistrationv1.MutatingWebhookConfiguration
}

func newStore() *store {
	return &store{
		serviceAccounts: map[string]*v1.ServiceAccount{},
		pods:            map[string]*v1.Pod{},
		secrets:         map[string]*v1.Secret{},
		nodes:           map[string]*v1.Node{},
		validating:      map[string]*admissionregistrationv1.ValidatingWebhookConfiguration{},
		mutating:        map[string]*admissionregistrationv1.MutatingWebhookConfiguration{},
	}
}

func meta(ns, name, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}
}

func (s *store) addServiceAccount(ns, name, uid string) *store {
	s.serviceAccounts[ns+"/"+name] = &v1.ServiceAccount{ObjectMeta: meta(ns, name, uid)}
	return s
}

func (s *store) addPod(ns, name, uid, sa, node string) *store {
	s.pods[ns+"/"+name] = &v1.Pod{ObjectMeta: meta(ns, name, uid), Spec: v1.PodSpec{ServiceAccountName: sa, NodeName: node}}
	return s
}

func (s *store) addSecret(ns, name, uid string) *store {
	s.secrets[ns+"/"+name] = &v1.Secret{ObjectMeta: meta(ns, name, uid)}
	return s
}

func (s *store) addNode(name, uid string) *store {
	s.nodes[name] = &v1.Node{ObjectMeta: meta("", name, uid)}
	return s
}

func (s *store) addValidating(name, uid string) *store {
	s.validating[name] = &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: meta("", name, uid)}
	return s
}

func (s *store) addMutating(name, uid string) *store {
	s.mutating[name] = &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: meta("", name, uid)}
	return s
}

func notFound(resource, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

// Kubernetes' ServiceAccountTokenGetter.

func (s *store) GetServiceAccount(_ context.Context, ns, name string) (*v1.ServiceAccount, error) {
	if o, ok := s.serviceAccounts[ns+"/"+name]; ok {
		return o, nil
	}
	return nil, notFound("serviceaccounts", name)
}

func (s *store) GetPod(_ context.Context, ns, name string) (*v1.Pod, error) {
	if o, ok := s.pods[ns+"/"+name]; ok {
		return o, nil
	}
	return nil, notFound("pods", name)
}

func (s *store) GetSecret(_ context.Context, ns, name string) (*v1.Secret, error) {
	if o, ok := s.secrets[ns+"/"+name]; ok {
		return o, nil
	}
	return nil, notFound("secrets", name)
}

func (s *store) GetNode(_ context.Context, name string) (*v1.Node, error) {
	if o, ok := s.nodes[name]; ok {
		return o, nil
	}
	return nil, notFound("nodes", name)
}

// GetValidatingWebhookConfiguration and GetMutatingWebhookConfiguration
// look up the webhook configurations Kubernetes 1.37's tokens may be bound
// to.
func (s *store) GetValidatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	if o, ok := s.validating[name]; ok {
		return o, nil
	}
	return nil, notFound("validatingwebhookconfigurations", name)
}

func (s *store) GetMutatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	if o, ok := s.mutating[name]; ok {
		return o, nil
	}
	return nil, notFound("mutatingwebhookconfigurations", name)
}

// ksa's ObjectGetter, through kubeapi as a client-go user would write it.

func (s *store) GetObject(ctx context.Context, kind tokens.ObjectKind, ns, name string) (tokens.LiveObject, error) {
	return kubeapi.ObjectGetter(func(ctx context.Context, kind tokens.ObjectKind, ns, name string) (metav1.Object, error) {
		switch kind {
		case tokens.KindServiceAccount:
			return s.GetServiceAccount(ctx, ns, name)
		case tokens.KindPod:
			return s.GetPod(ctx, ns, name)
		case tokens.KindSecret:
			return s.GetSecret(ctx, ns, name)
		case tokens.KindNode:
			return s.GetNode(ctx, name)
		case tokens.KindValidatingWebhookConfiguration:
			return s.GetValidatingWebhookConfiguration(ctx, name)
		case tokens.KindMutatingWebhookConfiguration:
			return s.GetMutatingWebhookConfiguration(ctx, name)
		}
		return nil, notFound(string(kind), name)
	}).GetObject(ctx, kind, ns, name)
}

func (s *store) deletePod(ns, name string, at time.Time) {
	ts := metav1.NewTime(at)
	s.pods[ns+"/"+name].DeletionTimestamp = &ts
}
