package podcertctl

import (
	"context"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/podcert"
)

// versionAPI is one version of certificates.k8s.io: its requests and its
// trust bundles.
type versionAPI interface {
	// informer watches the requests for signerName, in every namespace.
	informer(cs Client, signerName string, resync time.Duration) cache.SharedIndexInformer
	// decide decides a request of the informer's store and writes the
	// status: nil, nil for a request already decided or another signer's
	// (the field selector keeps those out; a fake client may not).
	decide(ctx context.Context, cs Client, s *podcert.Signer, obj any) (*podcert.Decision, error)
	// publish creates the trust bundle, or updates it when its
	// certificates, its labels or annotations of ours differ; written says
	// whether it did either, and stored is the bundle the API server then
	// holds.
	publish(ctx context.Context, cs Client, name, signerName, pem string, m ours) (written bool, stored *bundleView, err error)
	// published returns the certificates and the annotations of the trust
	// bundle; "" and nil when there is no such bundle.
	published(ctx context.Context, cs Client, name string) (pem string, annotations map[string]string, err error)
	// ping lists at most one request of signerName: whether the API server
	// answers, and the controller may list.
	ping(ctx context.Context, cs Client, signerName string) error
	// undecided returns when a request of the informer's store was
	// created, if it is signerName's and carries no outcome yet.
	undecided(obj any, signerName string) (created time.Time, ok bool)
}

// ours is the metadata the controller sets on the trust bundle: labels
// and annotations set, annotation keys removed. Others' labels and
// annotations stay.
type ours struct {
	labels, annotations map[string]string
	drop                []string
}

// set writes o into m; false when m held it already.
func (o ours) set(m *metav1.ObjectMeta) (changed bool) {
	put := func(dst *map[string]string, src map[string]string) {
		for k, v := range src {
			if old, ok := (*dst)[k]; !ok || old != v {
				if *dst == nil {
					*dst = map[string]string{}
				}
				(*dst)[k], changed = v, true
			}
		}
	}
	put(&m.Labels, o.labels)
	put(&m.Annotations, o.annotations)
	for _, k := range o.drop {
		if _, ok := m.Annotations[k]; ok {
			delete(m.Annotations, k)
			changed = true
		}
	}
	return changed
}

// version is a versionAPI from the few calls that differ between v1 and
// v1beta1: P is the request's type, B the trust bundle's.
type version[P interface{ GetCreationTimestamp() metav1.Time }, B any] struct {
	newInformer func(cs Client, resync time.Duration, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer
	// list lists requests.
	list func(ctx context.Context, cs Client, opts metav1.ListOptions) error
	// read returns the request and its status in podcert's shape.
	read func(P) (podcert.Request, podcert.Status)
	// apply writes the decision into a copy of the request.
	apply        func(*podcert.Decision, P) (P, error)
	updateStatus func(ctx context.Context, cs Client, p P) error
	// bundle builds the wanted trust bundle; sameSpec compares two; the
	// rest are the client's calls.
	bundle   func(name, signerName, pem string) B
	sameSpec func(have, want B) (same bool, updated B)
	// meta and pem read a bundle's metadata and certificates.
	meta   func(B) *metav1.ObjectMeta
	pem    func(B) string
	create func(ctx context.Context, cs Client, b B) error
	get    func(ctx context.Context, cs Client, name string) (B, error)
	update func(ctx context.Context, cs Client, b B) error
}

func apiFor(v string) versionAPI {
	if v == V1beta1 {
		return v1beta1API()
	}
	return v1API()
}

// signerSelector selects the requests naming signerName.
func signerSelector(signerName string) string {
	return fields.OneTermEqualSelector("spec.signerName", signerName).String()
}

func (v version[P, B]) informer(cs Client, signerName string, resync time.Duration) cache.SharedIndexInformer {
	sel := signerSelector(signerName)
	return v.newInformer(cs, resync, func(o *metav1.ListOptions) { o.FieldSelector = sel })
}

func (v version[P, B]) ping(ctx context.Context, cs Client, signerName string) error {
	return v.list(ctx, cs, metav1.ListOptions{FieldSelector: signerSelector(signerName), Limit: 1})
}

func (v version[P, B]) undecided(obj any, signerName string) (time.Time, bool) {
	p, ok := obj.(P)
	if !ok {
		return time.Time{}, false
	}
	req, st := v.read(p)
	if req.SignerName != signerName || st.Outcome() != 0 {
		return time.Time{}, false
	}
	return p.GetCreationTimestamp().Time, true
}

func (v version[P, B]) decide(ctx context.Context, cs Client, s *podcert.Signer, obj any) (*podcert.Decision, error) {
	p, ok := obj.(P)
	if !ok {
		return nil, nil
	}
	req, st := v.read(p)
	if req.SignerName != s.SignerName() || st.Outcome() != 0 {
		return nil, nil
	}
	d, err := s.Decide(&req)
	if err != nil {
		return nil, err
	}
	updated, err := v.apply(&d, p)
	if err != nil {
		return nil, err
	}
	return &d, v.updateStatus(ctx, cs, updated)
}

func (v version[P, B]) publish(ctx context.Context, cs Client, name, signerName, pem string, m ours) (bool, *bundleView, error) {
	want := v.bundle(name, signerName, pem)
	m.set(v.meta(want))
	err := v.create(ctx, cs, want)
	switch {
	case err == nil:
		return true, viewOf(pem, v.meta(want).Annotations), nil
	case !apierrors.IsAlreadyExists(err):
		return false, nil, err
	}
	have, err := v.get(ctx, cs, name)
	if err != nil {
		return false, nil, err
	}
	same, updated := v.sameSpec(have, want)
	if m.set(v.meta(updated)) {
		same = false
	}
	stored := viewOf(pem, v.meta(updated).Annotations)
	if same {
		return false, stored, nil
	}
	if err := v.update(ctx, cs, updated); err != nil {
		return false, nil, err
	}
	return true, stored, nil
}

func (v version[P, B]) published(ctx context.Context, cs Client, name string) (string, map[string]string, error) {
	b, err := v.get(ctx, cs, name)
	if apierrors.IsNotFound(err) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	return v.pem(b), v.meta(b).Annotations, nil
}

// requestInformer watches the requests r lists, as client-go's generated
// informers do: obj is the request's type; the reflector streams the
// initial list from the API server (watch-list) unless cs declares it
// cannot, as client-go's fake clientset does.
func requestInformer[P, L runtime.Object](cs Client, r Requests[P, L], obj P, resync time.Duration, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			tweak(&opts)
			return r.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			tweak(&opts)
			return r.Watch(ctx, opts)
		},
	}
	return cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, cs), obj, resync, cache.Indexers{})
}

// v1API is certificates.k8s.io/v1 (Kubernetes 1.37).
func v1API() versionAPI {
	return version[*certificatesv1.PodCertificateRequest, *certificatesv1.ClusterTrustBundle]{
		newInformer: func(cs Client, resync time.Duration, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
			return requestInformer(cs, cs.RequestsV1(metav1.NamespaceAll), &certificatesv1.PodCertificateRequest{}, resync, tweak)
		},
		list: func(ctx context.Context, cs Client, opts metav1.ListOptions) error {
			_, err := cs.RequestsV1(metav1.NamespaceAll).List(ctx, opts)
			return err
		},
		read: func(p *certificatesv1.PodCertificateRequest) (podcert.Request, podcert.Status) {
			return kubeapi.PodCertRequest(p)
		},
		apply: func(d *podcert.Decision, p *certificatesv1.PodCertificateRequest) (*certificatesv1.PodCertificateRequest, error) {
			p = p.DeepCopy()
			return p, kubeapi.ApplyPodCertDecision(d, p)
		},
		updateStatus: func(ctx context.Context, cs Client, p *certificatesv1.PodCertificateRequest) error {
			_, err := cs.RequestsV1(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return err
		},
		bundle: func(name, signerName, pem string) *certificatesv1.ClusterTrustBundle {
			return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: pem}}
		},
		sameSpec: func(have, want *certificatesv1.ClusterTrustBundle) (bool, *certificatesv1.ClusterTrustBundle) {
			same := have.Spec == want.Spec
			have.Spec = want.Spec
			return same, have
		},
		meta: func(b *certificatesv1.ClusterTrustBundle) *metav1.ObjectMeta { return &b.ObjectMeta },
		pem:  func(b *certificatesv1.ClusterTrustBundle) string { return b.Spec.TrustBundle },
		create: func(ctx context.Context, cs Client, b *certificatesv1.ClusterTrustBundle) error {
			_, err := cs.TrustBundlesV1().Create(ctx, b, metav1.CreateOptions{})
			return err
		},
		get: func(ctx context.Context, cs Client, name string) (*certificatesv1.ClusterTrustBundle, error) {
			return cs.TrustBundlesV1().Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, cs Client, b *certificatesv1.ClusterTrustBundle) error {
			_, err := cs.TrustBundlesV1().Update(ctx, b, metav1.UpdateOptions{})
			return err
		},
	}
}

// v1beta1API is certificates.k8s.io/v1beta1 (Kubernetes 1.35 and 1.36).
func v1beta1API() versionAPI {
	return version[*certificatesv1beta1.PodCertificateRequest, *certificatesv1beta1.ClusterTrustBundle]{
		newInformer: func(cs Client, resync time.Duration, tweak func(*metav1.ListOptions)) cache.SharedIndexInformer {
			return requestInformer(cs, cs.RequestsV1beta1(metav1.NamespaceAll), &certificatesv1beta1.PodCertificateRequest{}, resync, tweak)
		},
		list: func(ctx context.Context, cs Client, opts metav1.ListOptions) error {
			_, err := cs.RequestsV1beta1(metav1.NamespaceAll).List(ctx, opts)
			return err
		},
		read: func(p *certificatesv1beta1.PodCertificateRequest) (podcert.Request, podcert.Status) {
			return kubeapi.PodCertRequestV1beta1(p)
		},
		apply: func(d *podcert.Decision, p *certificatesv1beta1.PodCertificateRequest) (*certificatesv1beta1.PodCertificateRequest, error) {
			p = p.DeepCopy()
			return p, kubeapi.ApplyPodCertDecisionV1beta1(d, p)
		},
		updateStatus: func(ctx context.Context, cs Client, p *certificatesv1beta1.PodCertificateRequest) error {
			_, err := cs.RequestsV1beta1(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return err
		},
		bundle: func(name, signerName, pem string) *certificatesv1beta1.ClusterTrustBundle {
			return &certificatesv1beta1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: certificatesv1beta1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: pem}}
		},
		sameSpec: func(have, want *certificatesv1beta1.ClusterTrustBundle) (bool, *certificatesv1beta1.ClusterTrustBundle) {
			same := have.Spec == want.Spec
			have.Spec = want.Spec
			return same, have
		},
		meta: func(b *certificatesv1beta1.ClusterTrustBundle) *metav1.ObjectMeta { return &b.ObjectMeta },
		pem:  func(b *certificatesv1beta1.ClusterTrustBundle) string { return b.Spec.TrustBundle },
		create: func(ctx context.Context, cs Client, b *certificatesv1beta1.ClusterTrustBundle) error {
			_, err := cs.TrustBundlesV1beta1().Create(ctx, b, metav1.CreateOptions{})
			return err
		},
		get: func(ctx context.Context, cs Client, name string) (*certificatesv1beta1.ClusterTrustBundle, error) {
			return cs.TrustBundlesV1beta1().Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, cs Client, b *certificatesv1beta1.ClusterTrustBundle) error {
			_, err := cs.TrustBundlesV1beta1().Update(ctx, b, metav1.UpdateOptions{})
			return err
		},
	}
}
