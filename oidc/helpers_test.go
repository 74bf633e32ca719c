package oidc_test

import (
	"net/http"

	"github.com/ksa-go/ksa/oidc"
)

// httpHandlerFunc defers to a handler built after the server started (its
// URL is the issuer).
func httpHandlerFunc(h func() *oidc.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { h().ServeHTTP(w, r) }
}
