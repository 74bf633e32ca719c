package tokenreview_test

import (
	"context"
	"testing"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/tokenreview"
)

// FuzzReviewOnly feeds arbitrary answers to a ReviewOnly validator: it never
// panics, and it accepts only a service-account user with audiences among
// those asked.
func FuzzReviewOnly(f *testing.F) {
	f.Add(true, "system:serviceaccount:prod:billing", "uid", "billing-7d4", "pod-uid", "vault")
	f.Add(true, "system:serviceaccount:prod:", "", "", "", "vault")
	f.Add(true, "admin", "", "", "", "vault")
	f.Add(true, "system:serviceaccount:a:b:c", "u", "p", "", "other")
	f.Add(false, "system:serviceaccount:prod:billing", "uid", "", "", "")
	f.Fuzz(func(t *testing.T, authenticated bool, username, uid, pod, podUID, aud string) {
		api := tokenreview.ReviewerFunc(func(context.Context, tokenreview.Request) (*tokenreview.Status, error) {
			return &tokenreview.Status{Authenticated: authenticated, Audiences: []string{aud}, User: ksa.UserInfo{
				Username: username, UID: uid,
				Extra: map[string][]string{ksa.ExtraPodName: {pod}, ksa.ExtraPodUID: {podUID}},
			}}, nil
		})
		v, err := tokenreview.NewValidator(tokenreview.ValidatorConfig{Mode: tokenreview.ReviewOnly, Reviewer: api, Audiences: []string{"vault"}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := v.Validate(t.Context(), "token")
		if err != nil {
			return
		}
		if !authenticated || aud != "vault" || res.Identity.ServiceAccount.Username() != username {
			t.Fatalf("accepted %v %q %q", authenticated, username, aud)
		}
	})
}
