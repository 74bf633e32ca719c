// Package clientgo connects ksa to a cluster through client-go: an
// ObjectGetter for the validator's liveness checks, a Requester for the
// token manager and a Reviewer for package tokenreview. It lives in the interop module so that ksa itself never
// depends on client-go; copy it, or import it, as you like.
package clientgo

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/tokenreview"
	"github.com/ksa-go/ksa/tokens"
)

// ObjectGetter looks objects up with live GETs; kubeapi.ObjectGetter maps
// NotFound statuses to tokens.ErrObjectNotFound. For a busy server, back it
// with informer listers instead: the shape is the same.
func ObjectGetter(cs kubernetes.Interface) tokens.ObjectGetter {
	return kubeapi.ObjectGetter(func(ctx context.Context, kind tokens.ObjectKind, ns, name string) (metav1.Object, error) {
		opts := metav1.GetOptions{}
		switch kind {
		case tokens.KindServiceAccount:
			return cs.CoreV1().ServiceAccounts(ns).Get(ctx, name, opts)
		case tokens.KindPod:
			return cs.CoreV1().Pods(ns).Get(ctx, name, opts)
		case tokens.KindSecret:
			return cs.CoreV1().Secrets(ns).Get(ctx, name, opts)
		case tokens.KindNode:
			return cs.CoreV1().Nodes().Get(ctx, name, opts)
		case tokens.KindValidatingWebhookConfiguration:
			return cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, name, opts)
		case tokens.KindMutatingWebhookConfiguration:
			return cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, name, opts)
		}
		return nil, fmt.Errorf("clientgo: unknown kind %q", kind)
	})
}

// Requester requests tokens through the TokenRequest API.
func Requester(cs kubernetes.Interface) kubeapi.Requester {
	return kubeapi.RequesterFunc(func(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
		return cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, tr, metav1.CreateOptions{})
	})
}

// Reviewer sends TokenReviews (authentication.k8s.io/v1); the caller needs
// permission to create tokenreviews (the system:auth-delegator cluster
// role).
func Reviewer(cs kubernetes.Interface) tokenreview.Reviewer {
	return tokenreview.ReviewerFunc(func(ctx context.Context, req tokenreview.Request) (*tokenreview.Status, error) {
		tr, err := cs.AuthenticationV1().TokenReviews().Create(ctx, kubeapi.TokenReview(req), metav1.CreateOptions{})
		if err != nil {
			return nil, err
		}
		return kubeapi.ReviewStatus(tr)
	})
}
