package tokens

import (
	"github.com/ksa-go/ksa/internal/errs"

	"context"
	"errors"
	"time"

	"github.com/ksa-go/ksa"
)

// ObjectKind names the kinds of object a token is checked against.
type ObjectKind string

// The kinds a token names: its service account and the object it is bound
// to.
const (
	KindServiceAccount ObjectKind = "ServiceAccount"
	KindPod            ObjectKind = "Pod"
	KindSecret         ObjectKind = "Secret"
	KindNode           ObjectKind = "Node"
)

// ErrObjectNotFound is what an [ObjectGetter] returns (or wraps) for an
// object that does not exist. Getters over client-go map Kubernetes'
// NotFound status to it (kubeapi.ObjectGetter does).
var ErrObjectNotFound = errs.New(prefix, "object not found")

// LiveObject is what the validator needs to know of a live object.
type LiveObject struct {
	UID string
	// DeletionTimestamp is set once the object is being deleted; zero
	// otherwise.
	DeletionTimestamp time.Time
}

// ObjectGetter looks up the live objects a bound token names, so that a
// token stops working when its pod, secret, node or service account is gone,
// as in kube-apiserver. Namespace is empty for nodes and webhook
// configurations ([KindValidatingWebhookConfiguration],
// [KindMutatingWebhookConfiguration]). Implementations may be
// backed by client-go listers, a controller-runtime cache or a live client;
// they return (or wrap) [ErrObjectNotFound] for objects that do not exist
// (kubeapi.ObjectGetter maps client-go's NotFound errors), and must be safe
// for concurrent use. Any other error refuses the token ([ErrLookupFailed]).
type ObjectGetter interface {
	GetObject(ctx context.Context, kind ObjectKind, namespace, name string) (LiveObject, error)
}

// ObjectGetterFunc adapts a function to [ObjectGetter].
type ObjectGetterFunc func(ctx context.Context, kind ObjectKind, namespace, name string) (LiveObject, error)

// GetObject calls f.
func (f ObjectGetterFunc) GetObject(ctx context.Context, kind ObjectKind, namespace, name string) (LiveObject, error) {
	return f(ctx, kind, namespace, name)
}

func isNotFound(err error) bool { return errors.Is(err, ErrObjectNotFound) }

// checkObjects runs kube-apiserver's liveness checks, in its order: the
// service account, then a bound secret, pod, (for node-only binding) node,
// or webhook configuration.
// A deletion at or after invalidBefore is tolerated.
func checkObjects(ctx context.Context, get ObjectGetter, k *KubernetesClaims, invalidBefore time.Time) error {
	ns := k.Namespace
	sa, err := get.GetObject(ctx, KindServiceAccount, ns, k.ServiceAccount.Name)
	if err != nil {
		problem := ErrLookupFailed
		if isNotFound(err) {
			problem = ErrServiceAccountNotFound
		}
		return &ObjectError{Kind: KindServiceAccount, Namespace: ns, Name: k.ServiceAccount.Name, ClaimedUID: k.ServiceAccount.UID, Problem: problem, Err: err}
	}
	if sa.UID != k.ServiceAccount.UID {
		return &ObjectError{Kind: KindServiceAccount, Namespace: ns, Name: k.ServiceAccount.Name, ClaimedUID: k.ServiceAccount.UID, ActualUID: sa.UID, Problem: ErrServiceAccountUIDMismatch}
	}
	if !sa.DeletionTimestamp.IsZero() && sa.DeletionTimestamp.Before(invalidBefore) {
		return &ObjectError{Kind: KindServiceAccount, Namespace: ns, Name: k.ServiceAccount.Name, ClaimedUID: k.ServiceAccount.UID, ActualUID: sa.UID, DeletedAt: sa.DeletionTimestamp, Problem: ErrServiceAccountDeleted}
	}
	if k.Secret != nil {
		if err := checkBound(ctx, get, KindSecret, ns, *k.Secret, invalidBefore); err != nil {
			return err
		}
	}
	if k.Pod != nil {
		if err := checkBound(ctx, get, KindPod, ns, *k.Pod, invalidBefore); err != nil {
			return err
		}
	}
	// A pod-bound token's node is informational: only node-only binding is
	// checked against the live Node, as in Kubernetes.
	if k.Node != nil && k.Pod == nil {
		if err := checkBound(ctx, get, KindNode, "", *k.Node, invalidBefore); err != nil {
			return err
		}
	}
	if w := k.ValidatingWebhookConfiguration; w != nil {
		if err := checkBound(ctx, get, KindValidatingWebhookConfiguration, "", *w, invalidBefore); err != nil {
			return err
		}
	}
	if w := k.MutatingWebhookConfiguration; w != nil {
		if err := checkBound(ctx, get, KindMutatingWebhookConfiguration, "", *w, invalidBefore); err != nil {
			return err
		}
	}
	return nil
}

func checkBound(ctx context.Context, get ObjectGetter, kind ObjectKind, ns string, ref ksa.ObjectRef, invalidBefore time.Time) error {
	obj, err := get.GetObject(ctx, kind, ns, ref.Name)
	if err != nil {
		problem := ErrLookupFailed
		if isNotFound(err) {
			problem = ErrBoundObjectNotFound
		}
		return &ObjectError{Kind: kind, Namespace: ns, Name: ref.Name, ClaimedUID: ref.UID, Problem: problem, Err: err}
	}
	if obj.UID != ref.UID {
		return &ObjectError{Kind: kind, Namespace: ns, Name: ref.Name, ClaimedUID: ref.UID, ActualUID: obj.UID, Problem: ErrBoundObjectUIDMismatch}
	}
	if !obj.DeletionTimestamp.IsZero() && obj.DeletionTimestamp.Before(invalidBefore) {
		return &ObjectError{Kind: kind, Namespace: ns, Name: ref.Name, ClaimedUID: ref.UID, ActualUID: obj.UID, DeletedAt: obj.DeletionTimestamp, Problem: ErrBoundObjectDeleted}
	}
	return nil
}
