//go:build linux

package controlplane_test

import (
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/interop/controlplane"
)

// TestMoreAPIServers: a second kube-apiserver on the control plane's etcd
// sees what the first stores and accepts the tokens it issues (the same
// keys); the first restarted keeps etcd's objects, on a new URL; Stop
// stops them all.
func TestMoreAPIServers(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Config{})
	ns := cp.Namespace(t)
	api2, err := cp.AddAPIServer(t.Context(), controlplane.APIServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if api2.URL == cp.URL || !slices.Contains(cp.PIDs(), api2.PID()) {
		t.Fatalf("the second kube-apiserver: URL %s (the first's %s), PID %d among %v", api2.URL, cp.URL, api2.PID(), cp.PIDs())
	}
	if _, err := api2.Clientset().CoreV1().ServiceAccounts(ns).Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("the second kube-apiserver does not see the first's objects: %v", err)
	}
	tr, err := api2.Clientset().CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	review, err := cp.Clientset().AuthenticationV1().TokenReviews().Create(t.Context(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
	if err != nil || !review.Status.Authenticated {
		t.Fatalf("a token of the second kube-apiserver on the first: %v %+v", err, review.Status)
	}
	api2.Stop()

	oldURL := cp.URL
	if err := cp.RestartAPIServer(t.Context(), controlplane.APIServerConfig{}); err != nil {
		t.Fatal(err)
	}
	if cp.URL == oldURL {
		t.Errorf("the restarted kube-apiserver serves on %s, as before", cp.URL)
	}
	if _, err := cp.Clientset().CoreV1().ServiceAccounts(ns).Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("etcd's objects after the restart: %v", err)
	}
}
