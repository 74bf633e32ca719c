package tokenreview_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/tokenreview"
)

// Ask kube-apiserver alone, as Vault's Kubernetes auth does. In a real
// program the Reviewer sends an authentication.k8s.io/v1 TokenReview with
// client-go:
//
//	reviewer := tokenreview.ReviewerFunc(func(ctx context.Context, req tokenreview.Request) (*tokenreview.Status, error) {
//		tr, err := clientset.AuthenticationV1().TokenReviews().Create(ctx, kubeapi.TokenReview(req), metav1.CreateOptions{})
//		if err != nil {
//			return nil, err
//		}
//		return kubeapi.ReviewStatus(tr)
//	})
//
// Here a stand-in answers as the apiserver would for a live pod's token.
func ExampleValidator_Validate() {
	reviewer := tokenreview.ReviewerFunc(func(ctx context.Context, req tokenreview.Request) (*tokenreview.Status, error) {
		id := ksa.Identity{
			ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "sa-uid"},
			Pod:            ksa.ObjectRef{Name: "billing-7d4", UID: "pod-uid"},
		}
		return &tokenreview.Status{Authenticated: true, User: id.UserInfo(), Audiences: req.Audiences}, nil
	})
	v, err := tokenreview.NewValidator(tokenreview.ValidatorConfig{
		Mode:      tokenreview.ReviewOnly,
		Reviewer:  reviewer,
		Audiences: []string{"vault"},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := v.Validate(context.Background(), "eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Identity.ServiceAccount, res.Identity.Pod.Name, res.Audiences)
	// Output:
	// system:serviceaccount:prod:billing billing-7d4 [vault]
}
