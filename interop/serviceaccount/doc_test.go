// Package serviceaccount_test proves ksa's tokens and jwks packages against
// Kubernetes' own k8s.io/kubernetes/pkg/serviceaccount: tokens minted by
// either validate with the other and give the same user, tokens are
// byte-identical for the same clock, jti and key, and key IDs agree.
package serviceaccount_test
