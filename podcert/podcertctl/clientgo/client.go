package clientgo

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// Client is a podcertctl.Client over a clientset: discovery, the
// PodCertificateRequests and ClusterTrustBundles of certificates.k8s.io
// v1 and v1beta1, and the Leases of coordination.k8s.io/v1.
type Client struct {
	cs kubernetes.Interface
}

// New returns the podcertctl.Client of cs. A nil cs is a
// *ksa.ConfigError.
func New(cs kubernetes.Interface) (*Client, error) {
	if cs == nil {
		return nil, &ksa.ConfigError{Field: "clientgo.New", Reason: "has a nil clientset"}
	}
	return &Client{cs: cs}, nil
}

// ServerResourcesForGroupVersion implements podcertctl.Client with the
// clientset's discovery.
func (c *Client) ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error) {
	return c.cs.Discovery().ServerResourcesForGroupVersion(groupVersion)
}

// RequestsV1 implements podcertctl.Client.
func (c *Client) RequestsV1(namespace string) podcertctl.Requests[*certificatesv1.PodCertificateRequest, *certificatesv1.PodCertificateRequestList] {
	return c.cs.CertificatesV1().PodCertificateRequests(namespace)
}

// RequestsV1beta1 implements podcertctl.Client.
func (c *Client) RequestsV1beta1(namespace string) podcertctl.Requests[*certificatesv1beta1.PodCertificateRequest, *certificatesv1beta1.PodCertificateRequestList] {
	return c.cs.CertificatesV1beta1().PodCertificateRequests(namespace)
}

// TrustBundlesV1 implements podcertctl.Client.
func (c *Client) TrustBundlesV1() podcertctl.TrustBundles[*certificatesv1.ClusterTrustBundle] {
	return c.cs.CertificatesV1().ClusterTrustBundles()
}

// TrustBundlesV1beta1 implements podcertctl.Client.
func (c *Client) TrustBundlesV1beta1() podcertctl.TrustBundles[*certificatesv1beta1.ClusterTrustBundle] {
	return c.cs.CertificatesV1beta1().ClusterTrustBundles()
}

// Leases implements podcertctl.Client.
func (c *Client) Leases(namespace string) podcertctl.Leases {
	return c.cs.CoordinationV1().Leases(namespace)
}

// IsWatchListSemanticsUnSupported reports what the clientset says of
// itself (a fake clientset: true), false when it says nothing: the
// controller's informer streams its initial list unless this is true.
func (c *Client) IsWatchListSemanticsUnSupported() bool {
	u, ok := c.cs.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && u.IsWatchListSemanticsUnSupported()
}
