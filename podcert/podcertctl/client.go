package podcertctl

import (
	"context"
	"errors"
	"net/http"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// Client is what the controller asks of the API server: which resources
// certificates.k8s.io/v1 serves, and the PodCertificateRequests and
// ClusterTrustBundles of each version, through the typed clients of
// client-go's clientset ([Requests] and [TrustBundles] are the methods
// the controller calls). With [Config.LeaderElection] it must be a
// [LeaseClient] too. [NewRESTClient] makes one from a rest.Config;
// package clientgo makes one of a clientset (kubernetes.Interface, a fake
// one in tests); both are LeaseClients.
//
// The controller does not take client-go's kubernetes.Interface itself:
// that package registers every API group, and linking it made the ksa
// binary twice as large. A Client may also implement
// IsWatchListSemanticsUnSupported() bool, as client-go's fake clientset
// does: true makes the informer list rather than stream its initial list.
type Client interface {
	// ServerResourcesForGroupVersion lists the resources the API server
	// serves in groupVersion, as client-go's discovery does; the error is
	// NotFound when it serves no such group version.
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
	// RequestsV1 and RequestsV1beta1 are the PodCertificateRequests of a
	// namespace (all namespaces when empty).
	RequestsV1(namespace string) Requests[*certificatesv1.PodCertificateRequest, *certificatesv1.PodCertificateRequestList]
	RequestsV1beta1(namespace string) Requests[*certificatesv1beta1.PodCertificateRequest, *certificatesv1beta1.PodCertificateRequestList]
	// TrustBundlesV1 and TrustBundlesV1beta1 are the ClusterTrustBundles.
	TrustBundlesV1() TrustBundles[*certificatesv1.ClusterTrustBundle]
	TrustBundlesV1beta1() TrustBundles[*certificatesv1beta1.ClusterTrustBundle]
}

// LeaseClient is a [Client] that also gives the Leases of
// coordination.k8s.io/v1, which leader election holds
// ([Config.LeaderElection]); New refuses leader election with a Client
// that is not one.
type LeaseClient interface {
	Client
	// Leases are the Leases of a namespace.
	Leases(namespace string) Leases
}

// Requests is the part of a PodCertificateRequest client the controller
// calls: P is the request's type, L its list's.
type Requests[P, L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	UpdateStatus(ctx context.Context, p P, opts metav1.UpdateOptions) (P, error)
}

// TrustBundles is the part of a ClusterTrustBundle client the controller
// calls.
type TrustBundles[B runtime.Object] interface {
	Create(ctx context.Context, b B, opts metav1.CreateOptions) (B, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (B, error)
	Update(ctx context.Context, b B, opts metav1.UpdateOptions) (B, error)
}

// Leases is the part of a Lease client the controller's leader election
// calls: client-go's typed client of coordination.k8s.io/v1 Leases has
// these methods.
type Leases interface {
	Create(ctx context.Context, l *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error)
	Update(ctx context.Context, l *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error)
}

// RESTClient is a [Client] over client-go's REST client, with a scheme
// that holds certificates.k8s.io's types and coordination.k8s.io/v1's
// alone.
type RESTClient struct {
	v1, v1beta1, leases rest.Interface
	params              runtime.ParameterCodec
}

// NewRESTClient returns a Client for the API server of rc. As client-go's
// clientset does, it sends requests as protobuf, shares one rate limiter of
// rc's QPS and Burst between the API groups and versions, and names itself
// with client-go's default user agent when rc names none.
func NewRESTClient(rc *rest.Config) (*RESTClient, error) {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	if err := errors.Join(certificatesv1.AddToScheme(scheme), certificatesv1beta1.AddToScheme(scheme), coordinationv1.AddToScheme(scheme)); err != nil {
		return nil, wrap(err, "registering certificates.k8s.io and coordination.k8s.io")
	}
	codecs := rest.CodecFactoryForGeneratedClient(scheme, serializer.NewCodecFactory(scheme)).WithoutConversion()
	cfg := *rc
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		if cfg.Burst <= 0 {
			return nil, wrap(nil, "client burst %d: must be positive when QPS is", cfg.Burst)
		}
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = codecs
	httpClient, err := rest.HTTPClientFor(&cfg)
	if err != nil {
		return nil, wrap(err, "client transport")
	}
	c := &RESTClient{params: runtime.NewParameterCodec(scheme)}
	if c.v1, err = restFor(cfg, httpClient, certificatesv1.SchemeGroupVersion); err != nil {
		return nil, err
	}
	if c.v1beta1, err = restFor(cfg, httpClient, certificatesv1beta1.SchemeGroupVersion); err != nil {
		return nil, err
	}
	if c.leases, err = restFor(cfg, httpClient, coordinationv1.SchemeGroupVersion); err != nil {
		return nil, err
	}
	return c, nil
}

func restFor(cfg rest.Config, httpClient *http.Client, gv schema.GroupVersion) (rest.Interface, error) {
	cfg.GroupVersion = &gv
	c, err := rest.RESTClientForConfigAndClient(&cfg, httpClient)
	if err != nil {
		return nil, wrap(err, "client of %s", gv)
	}
	return c, nil
}

// ServerResourcesForGroupVersion implements [Client].
func (c *RESTClient) ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error) {
	res := &metav1.APIResourceList{GroupVersion: groupVersion}
	if err := c.v1.Get().AbsPath("/apis", groupVersion).Do(context.Background()).Into(res); err != nil {
		return nil, err
	}
	return res, nil
}

// RequestsV1 implements [Client].
func (c *RESTClient) RequestsV1(namespace string) Requests[*certificatesv1.PodCertificateRequest, *certificatesv1.PodCertificateRequestList] {
	return &resource[*certificatesv1.PodCertificateRequest, *certificatesv1.PodCertificateRequestList]{
		client: c.v1, params: c.params, name: "podcertificaterequests", namespace: namespace,
		newObject: func() *certificatesv1.PodCertificateRequest { return &certificatesv1.PodCertificateRequest{} },
		newList:   func() *certificatesv1.PodCertificateRequestList { return &certificatesv1.PodCertificateRequestList{} }}
}

// RequestsV1beta1 implements [Client].
func (c *RESTClient) RequestsV1beta1(namespace string) Requests[*certificatesv1beta1.PodCertificateRequest, *certificatesv1beta1.PodCertificateRequestList] {
	return &resource[*certificatesv1beta1.PodCertificateRequest, *certificatesv1beta1.PodCertificateRequestList]{
		client: c.v1beta1, params: c.params, name: "podcertificaterequests", namespace: namespace,
		newObject: func() *certificatesv1beta1.PodCertificateRequest { return &certificatesv1beta1.PodCertificateRequest{} },
		newList: func() *certificatesv1beta1.PodCertificateRequestList {
			return &certificatesv1beta1.PodCertificateRequestList{}
		}}
}

// TrustBundlesV1 implements [Client].
func (c *RESTClient) TrustBundlesV1() TrustBundles[*certificatesv1.ClusterTrustBundle] {
	return &resource[*certificatesv1.ClusterTrustBundle, *certificatesv1.ClusterTrustBundleList]{
		client: c.v1, params: c.params, name: "clustertrustbundles",
		newObject: func() *certificatesv1.ClusterTrustBundle { return &certificatesv1.ClusterTrustBundle{} }}
}

// TrustBundlesV1beta1 implements [Client].
func (c *RESTClient) TrustBundlesV1beta1() TrustBundles[*certificatesv1beta1.ClusterTrustBundle] {
	return &resource[*certificatesv1beta1.ClusterTrustBundle, *certificatesv1beta1.ClusterTrustBundleList]{
		client: c.v1beta1, params: c.params, name: "clustertrustbundles",
		newObject: func() *certificatesv1beta1.ClusterTrustBundle { return &certificatesv1beta1.ClusterTrustBundle{} }}
}

// Leases implements [Client].
func (c *RESTClient) Leases(namespace string) Leases {
	return &resource[*coordinationv1.Lease, *coordinationv1.LeaseList]{
		client: c.leases, params: c.params, name: "leases", namespace: namespace,
		newObject: func() *coordinationv1.Lease { return &coordinationv1.Lease{} }}
}

// resource is one resource of one group version, in a namespace or
// cluster-scoped (namespace empty), with the requests client-go's
// generated clients send (client-go's gentype package would do the same,
// but it links server-side apply and its OpenAPI models). T is the
// object's type, L its list's.
type resource[T interface {
	runtime.Object
	GetName() string
}, L runtime.Object] struct {
	client    rest.Interface
	params    runtime.ParameterCodec
	name      string
	namespace string
	newObject func() T
	newList   func() L
}

func (r *resource[T, L]) request(verb string) *rest.Request {
	return r.client.Verb(verb).UseProtobufAsDefaultIfPreferred(true).
		NamespaceIfScoped(r.namespace, r.namespace != "").Resource(r.name)
}

func (r *resource[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	list := r.newList()
	err := r.request(http.MethodGet).VersionedParams(&opts, r.params).Timeout(timeout(opts)).Do(ctx).Into(list)
	return list, err
}

func (r *resource[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return r.request(http.MethodGet).VersionedParams(&opts, r.params).Timeout(timeout(opts)).Watch(ctx)
}

func (r *resource[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	obj := r.newObject()
	err := r.request(http.MethodGet).Name(name).VersionedParams(&opts, r.params).Do(ctx).Into(obj)
	return obj, err
}

func (r *resource[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := r.newObject()
	err := r.request(http.MethodPost).VersionedParams(&opts, r.params).Body(obj).Do(ctx).Into(out)
	return out, err
}

func (r *resource[T, L]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := r.newObject()
	err := r.request(http.MethodPut).Name(obj.GetName()).VersionedParams(&opts, r.params).Body(obj).Do(ctx).Into(out)
	return out, err
}

func (r *resource[T, L]) UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := r.newObject()
	err := r.request(http.MethodPut).Name(obj.GetName()).SubResource("status").VersionedParams(&opts, r.params).Body(obj).Do(ctx).Into(out)
	return out, err
}

// timeout is a list or watch's server-side timeout, also the client's.
func timeout(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}
