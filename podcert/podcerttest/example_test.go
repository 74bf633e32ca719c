package podcerttest_test

import (
	"fmt"
	"os"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
)

// A program's test mounts a pod certificate and the signer's trust bundle
// as the kubelet does; the program reads them with podcert's Source and
// TrustFile and follows a renewal and a CA rotation.
func Example() {
	dir, err := os.MkdirTemp("", "podcert")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ca, err := podcerttest.NewSigner(podcerttest.Config{TrustDomain: "example.org"})
	if err != nil {
		panic(err)
	}
	mount, err := podcerttest.NewMount(dir)
	if err != nil {
		panic(err)
	}
	pod := podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"}
	publish := func() {
		bundle, err := ca.Issue(pod)
		if err != nil {
			panic(err)
		}
		if err := mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": ca.TrustBundle()}); err != nil {
			panic(err)
		}
	}
	publish()

	// The program under test.
	src, err := podcert.NewSource(podcert.SourceConfig{BundlePath: mount.Path("credentialbundle.pem")})
	if err != nil {
		panic(err)
	}
	roots, err := podcert.NewTrustFile(podcert.TrustFileConfig{Path: mount.Path("ca.pem")})
	if err != nil {
		panic(err)
	}
	show := func(step string) {
		cred, err := src.Current()
		if err != nil {
			panic(err)
		}
		issuedBy := 0
		for i, root := range roots.Current().Certificates {
			if cred.Certificate.Leaf.CheckSignatureFrom(root) == nil {
				issuedBy = i + 1
			}
		}
		fmt.Printf("%-8s %s, issued by CA %d of %d\n", step, cred.SPIFFEID, issuedBy, len(roots.Current().Certificates))
	}
	show("issued")

	if err := ca.StageCA(); err != nil {
		panic(err)
	}
	publish()
	show("staged")
	ca.PromoteCA()
	publish()
	show("promoted")
	ca.RetireCA()
	publish()
	show("retired")
	// Output:
	// issued   spiffe://example.org/ns/shop/sa/cart, issued by CA 1 of 1
	// staged   spiffe://example.org/ns/shop/sa/cart, issued by CA 1 of 2
	// promoted spiffe://example.org/ns/shop/sa/cart, issued by CA 2 of 2
	// retired  spiffe://example.org/ns/shop/sa/cart, issued by CA 1 of 1
}
