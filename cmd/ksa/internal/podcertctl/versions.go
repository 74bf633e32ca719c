package podcertctl

import (
	"context"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	certinformersv1 "k8s.io/client-go/informers/certificates/v1"
	certinformersv1beta1 "k8s.io/client-go/informers/certificates/v1beta1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/ksa-go/ksa/podcert"
)

// versionAPI is one version of certificates.k8s.io: its requests and its
// trust bundles.
type versionAPI interface {
	// informer watches the requests for signerName, in every namespace.
	informer(cs kubernetes.Interface, signerName string, resync time.Duration) cache.SharedIndexInformer
	// decide decides a request of the informer's store and writes the
	// status: nil, nil for a request already decided or another signer's
	// (the field selector keeps those out; a fake client may not).
	decide(ctx context.Context, cs kubernetes.Interface, s *podcert.Signer, obj any) (*podcert.Decision, error)
	// publish creates the trust bundle, or updates it when it differs.
	publish(ctx context.Context, cs kubernetes.Interface, name, signerName, pem string) error
}

func apiFor(version string) versionAPI {
	if version == V1beta1 {
		return v1beta1API{}
	}
	return v1API{}
}

// bySigner restricts a list or watch to one signer's requests.
func bySigner(signerName string) func(*metav1.ListOptions) {
	sel := fields.OneTermEqualSelector("spec.signerName", signerName).String()
	return func(o *metav1.ListOptions) { o.FieldSelector = sel }
}

type v1API struct{}

func (v1API) informer(cs kubernetes.Interface, signerName string, resync time.Duration) cache.SharedIndexInformer {
	return certinformersv1.NewFilteredPodCertificateRequestInformer(cs, metav1.NamespaceAll, resync, cache.Indexers{}, bySigner(signerName))
}

func (v1API) decide(ctx context.Context, cs kubernetes.Interface, s *podcert.Signer, obj any) (*podcert.Decision, error) {
	pcr, ok := obj.(*certificatesv1.PodCertificateRequest)
	if !ok || pcr.Spec.SignerName != s.SignerName() || podcert.StatusFromV1(&pcr.Status).Outcome() != 0 {
		return nil, nil
	}
	req := podcert.FromV1(pcr)
	d, err := s.Decide(&req)
	if err != nil {
		return nil, err
	}
	updated := pcr.DeepCopy()
	if err := d.ApplyV1(updated); err != nil {
		return nil, err
	}
	_, err = cs.CertificatesV1().PodCertificateRequests(pcr.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return &d, err
}

func (v1API) publish(ctx context.Context, cs kubernetes.Interface, name, signerName, pem string) error {
	api := cs.CertificatesV1().ClusterTrustBundles()
	want := &certificatesv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: pem},
	}
	_, err := api.Create(ctx, want, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	have, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if have.Spec == want.Spec {
		return nil
	}
	have.Spec = want.Spec
	_, err = api.Update(ctx, have, metav1.UpdateOptions{})
	return err
}

type v1beta1API struct{}

func (v1beta1API) informer(cs kubernetes.Interface, signerName string, resync time.Duration) cache.SharedIndexInformer {
	return certinformersv1beta1.NewFilteredPodCertificateRequestInformer(cs, metav1.NamespaceAll, resync, cache.Indexers{}, bySigner(signerName))
}

func (v1beta1API) decide(ctx context.Context, cs kubernetes.Interface, s *podcert.Signer, obj any) (*podcert.Decision, error) {
	pcr, ok := obj.(*certificatesv1beta1.PodCertificateRequest)
	if !ok || pcr.Spec.SignerName != s.SignerName() || podcert.StatusFromV1beta1(&pcr.Status).Outcome() != 0 {
		return nil, nil
	}
	req := podcert.FromV1beta1(pcr)
	d, err := s.Decide(&req)
	if err != nil {
		return nil, err
	}
	updated := pcr.DeepCopy()
	if err := d.ApplyV1beta1(updated); err != nil {
		return nil, err
	}
	_, err = cs.CertificatesV1beta1().PodCertificateRequests(pcr.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return &d, err
}

func (v1beta1API) publish(ctx context.Context, cs kubernetes.Interface, name, signerName, pem string) error {
	api := cs.CertificatesV1beta1().ClusterTrustBundles()
	want := &certificatesv1beta1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       certificatesv1beta1.ClusterTrustBundleSpec{SignerName: signerName, TrustBundle: pem},
	}
	_, err := api.Create(ctx, want, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	have, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if have.Spec == want.Spec {
		return nil
	}
	have.Spec = want.Spec
	_, err = api.Update(ctx, have, metav1.UpdateOptions{})
	return err
}
