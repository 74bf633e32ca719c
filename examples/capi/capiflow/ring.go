package capiflow

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/publish"
)

// RingKey is the ConfigMap's data key that holds the ring file, as JSON
// (the format of extsigner.ParseRingFile).
const RingKey = "ring.json"

// RingName returns the name of the ConfigMap holding a cluster's ring
// file: the cluster's name followed by "-sa-ring".
func RingName(cluster string) string { return clusterapi.SecretName(cluster) + "-ring" }

// ConfigMapRing is a publish.RingStore over a ConfigMap: the ring file
// under [RingKey], its version the ConfigMap's resourceVersion, written
// with an update on that resourceVersion, which the API server refuses
// when another writer changed the ConfigMap since (compare and swap).
type ConfigMapRing struct {
	// Client reaches the ConfigMap's namespace.
	Client corev1client.ConfigMapsGetter
	// Namespace and Name name the ConfigMap.
	Namespace, Name string
}

// Ring returns the cluster's ring file store: [RingName] in its
// namespace.
func (f *Flow) Ring() *ConfigMapRing {
	return &ConfigMapRing{Client: f.cfg.Kube, Namespace: f.cfg.Namespace, Name: RingName(f.cfg.Cluster)}
}

// what names the ConfigMap in messages.
func (r *ConfigMapRing) what() string { return "ConfigMap " + r.Namespace + "/" + r.Name }

// Read returns the ring file and the ConfigMap's resourceVersion. A
// missing ConfigMap is a *publish.Error matching publish.ErrNotFound; one
// without the ring file, or with one over extsigner.MaxRingFileBytes, is
// a *publish.Error matching publish.ErrStore; a ring file refused is
// extsigner.ParseRingFile's error (extsigner.ErrInvalidRingFile).
func (r *ConfigMapRing) Read(ctx context.Context) (*extsigner.RingFile, publish.Version, error) {
	cm, err := r.Client.ConfigMaps(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		return nil, "", r.apiError("reading", err)
	}
	data, ok := cm.Data[RingKey]
	switch {
	case !ok:
		return nil, "", &publish.Error{Kind: publish.ErrStore, What: r.what() + " holds no " + RingKey, Fix: "write the ring file under " + RingKey}
	case len(data) > extsigner.MaxRingFileBytes:
		return nil, "", &publish.Error{Kind: publish.ErrStore, What: r.what() + "'s " + RingKey + " is over the " + strconv.Itoa(extsigner.MaxRingFileBytes) + "-byte limit"}
	}
	f, err := extsigner.ParseRingFile([]byte(data))
	if err != nil {
		return nil, "", err
	}
	return f, publish.Version(cm.ResourceVersion), nil
}

// Write replaces the ring file with f if the ConfigMap is still at
// resourceVersion v; otherwise nothing is written and the error matches
// publish.ErrChanged.
func (r *ConfigMapRing) Write(ctx context.Context, f *extsigner.RingFile, v publish.Version) error {
	cms := r.Client.ConfigMaps(r.Namespace)
	cm, err := cms.Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		return r.apiError("reading", err)
	}
	if cm.ResourceVersion != string(v) {
		return &publish.Error{Kind: publish.ErrChanged, What: r.what() + " changed since it was read: another writer wrote it"}
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[RingKey] = string(f.AppendJSON(nil))
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return r.apiError("updating", err)
	}
	return nil
}

// Create writes the first ring file in a new ConfigMap, labelled with
// the cluster's name as Cluster API labels a cluster's Secrets. A
// ConfigMap already there is left alone: the error matches
// publish.ErrChanged.
func (r *ConfigMapRing) Create(ctx context.Context, f *extsigner.RingFile, cluster string) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name, Labels: map[string]string{clusterapi.ClusterNameLabel: cluster}},
		Data:       map[string]string{RingKey: string(f.AppendJSON(nil))},
	}
	if _, err := r.Client.ConfigMaps(r.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return r.apiError("creating", err)
	}
	return nil
}

// apiError sorts a failed request into publish's kinds.
func (r *ConfigMapRing) apiError(doing string, err error) error {
	what := doing + " " + r.what()
	switch {
	case apierrors.IsNotFound(err):
		return &publish.Error{Kind: publish.ErrNotFound, What: r.what() + " does not exist", Err: err}
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return &publish.Error{Kind: publish.ErrChanged, What: what + ": another writer wrote it", Err: err}
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return &publish.Error{Kind: publish.ErrPermissionDenied, What: what, Fix: "grant the controller get, create and update on configmaps in " + r.Namespace, Err: err}
	}
	return &publish.Error{Kind: publish.ErrStore, What: what, Err: err}
}
