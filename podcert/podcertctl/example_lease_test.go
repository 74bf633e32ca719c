package podcertctl_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
	"github.com/ksa-go/ksa/podcert/podcertctl/clientgo"
)

// Replicas of one signer with leader election: each names itself (its
// pod's name) and the namespace of the Lease; the holder publishes the
// trust bundle, and every replica decides requests. This one is alone, so
// it takes the Lease at once and publishes; stopped, it gives the Lease
// up.
func ExampleLeaderElectionConfig() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "workload CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	caCert, _ := x509.ParseCertificate(caDER)
	signer, err := podcert.NewSigner(podcert.SignerConfig{SignerName: "example.com/workload", Key: caKey,
		Chain: []*x509.Certificate{caCert}, Now: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	cs := fake.NewClientset()
	client, err := clientgo.New(cs)
	if err != nil {
		panic(err)
	}
	events := make(chan podcertctl.EventKind, 16)
	ctl, err := podcertctl.New(podcertctl.Config{Client: client, Signer: signer, CAKey: caKey, APIVersion: podcertctl.V1,
		LeaderElection: &podcertctl.LeaderElectionConfig{Namespace: "ksa-system", Identity: "podcert-7d9f-abcde"},
		Observe:        func(e podcertctl.Event) { events <- e.Kind }})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	fmt.Println(<-events) // the Lease taken
	fmt.Println(<-events) // the bundle published
	fmt.Println(ctl.Leading())
	lease, _ := cs.CoordinationV1().Leases("ksa-system").Get(context.Background(), podcertctl.DefaultLeaseName("example.com/workload"), metav1.GetOptions{})
	fmt.Println(lease.Name, *lease.Spec.HolderIdentity, *lease.Spec.LeaseDurationSeconds)
	stop()
	if err := <-done; err != nil {
		panic(err)
	}
	fmt.Println(<-events) // given up
	lease, _ = cs.CoordinationV1().Leases("ksa-system").Get(context.Background(), lease.Name, metav1.GetOptions{})
	fmt.Println(lease.Spec.HolderIdentity == nil, ctl.Leading())
	// Output:
	// LeaseAcquired
	// TrustBundleWritten
	// true
	// ksa-podcert.example.com.workload podcert-7d9f-abcde 15
	// LeaseLost
	// true false
}
