package kubeapi

import (
	"github.com/ksa-go/ksa/internal/errs"

	"context"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/tokens"
)

// GetFunc returns the live object of a kind, as a client-go Get or a
// lister does; Namespace is empty for nodes.
type GetFunc func(ctx context.Context, kind tokens.ObjectKind, namespace, name string) (metav1.Object, error)

// ObjectGetter adapts a function returning API objects to
// tokens.ObjectGetter: the object's UID and deletion timestamp are what the
// validator checks, and a NotFound status (apierrors.IsNotFound) is mapped
// to an error matching tokens.ErrObjectNotFound that still wraps the
// original. With client-go:
//
//	getter := kubeapi.ObjectGetter(func(ctx context.Context, kind tokens.ObjectKind, ns, name string) (metav1.Object, error) {
//		switch kind {
//		case tokens.KindServiceAccount:
//			return clientset.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
//		case tokens.KindPod:
//			return clientset.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
//		case tokens.KindSecret:
//			return clientset.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
//		case tokens.KindNode:
//			return clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
//		}
//		return nil, fmt.Errorf("no getter for kind %s", kind)
//	})
func ObjectGetter(get GetFunc) tokens.ObjectGetter {
	return tokens.ObjectGetterFunc(func(ctx context.Context, kind tokens.ObjectKind, ns, name string) (tokens.LiveObject, error) {
		obj, err := get(ctx, kind, ns, name)
		if err != nil {
			return tokens.LiveObject{}, NotFound(err)
		}
		if obj == nil || isNilPointer(obj) {
			return tokens.LiveObject{}, errNoObject
		}
		live := tokens.LiveObject{UID: string(obj.GetUID())}
		if ts := obj.GetDeletionTimestamp(); ts != nil {
			live.DeletionTimestamp = ts.Time
		}
		return live, nil
	})
}

// isNilPointer reports a typed nil, such as a (*corev1.Pod)(nil) returned
// without an error, whose methods would panic.
func isNilPointer(obj metav1.Object) bool {
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// errNoObject reports a GetFunc that returned neither an object nor an
// error: the validator refuses the token as a failed lookup.
var errNoObject = errs.New(prefix, "the get function returned neither an object nor an error")

// NotFound returns err unchanged unless it is a Kubernetes NotFound status,
// which it wraps so that it also matches tokens.ErrObjectNotFound.
func NotFound(err error) error {
	if err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	return &notFoundError{err: err}
}

type notFoundError struct{ err error }

func (e *notFoundError) Error() string { return e.err.Error() }

func (e *notFoundError) Is(target error) bool { return target == tokens.ErrObjectNotFound }

func (e *notFoundError) Unwrap() error { return e.err }
