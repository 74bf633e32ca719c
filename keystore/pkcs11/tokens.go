//go:build cgo

package pkcs11

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"go.step.sm/crypto/kms/apiv1"
	steppkcs11 "go.step.sm/crypto/kms/pkcs11"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/stepkms"
)

// tokens are the tokens a Store logged in to.
type tokens struct {
	mu sync.Mutex
	// byKey are the tokens, by module and token.
	byKey map[string]*token
	// selectors say how each module's tokens are named (token, serial or
	// slot-id).
	selectors map[string]string
	closed    bool
}

// token is a PKCS #11 token the Store is logged in to.
type token struct {
	km *steppkcs11.PKCS11
	// pin is the SHA-256 of the PIN the token was opened with.
	pin [sha256.Size]byte
}

// close logs out of every token; later gets fail.
func (ts *tokens) close() error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.closed = true
	var errs []error
	for k, t := range ts.byKey {
		errs = append(errs, t.km.Close())
		delete(ts.byKey, k)
	}
	return errors.Join(errs...)
}

// get returns the token r names, logged in to with pin the first time;
// later, pin must be the one the token was opened with.
func (ts *tokens) get(r keystore.Ref, pin string) (*token, error) {
	sum := sha256.Sum256([]byte(pin))
	module := r.Attr("module-path")
	kind, value := selector(r)
	key := module + "\x00" + kind + "=" + value

	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return nil, stepkms.Closed(r)
	}
	if prev, ok := ts.selectors[module]; ok && prev != kind {
		return nil, stepkms.StoreError(r, fmt.Sprintf("names its token by %s, another key of this process a token of the same module by %s", kind, prev),
			"name the token the same way (token=, serial= or slot-id=) in every reference to "+moduleName(r)+", so that one token cannot be logged in to under two names", nil)
	}
	if t, ok := ts.byKey[key]; ok {
		if subtle.ConstantTimeCompare(t.pin[:], sum[:]) != 1 {
			return nil, stepkms.StoreError(r, "its PIN differs from the one the token was opened with in this process",
				"give every reference to the token the same PIN: a token the process is logged in to accepts any PIN, so ksa checks it against the first", nil)
		}
		return t, nil
	}
	km, err := steppkcs11.New(context.Background(), apiv1.Options{Type: apiv1.PKCS11, URI: managerURI(r), Pin: pin})
	if err != nil {
		return nil, openError(r, err)
	}
	t := &token{km: km, pin: sum}
	if ts.byKey == nil {
		ts.byKey, ts.selectors = map[string]*token{}, map[string]string{}
	}
	ts.byKey[key] = t
	ts.selectors[module] = kind
	return t, nil
}

// selector returns how r names its token: "token", "serial" or
// "slot-id", and the value.
func selector(r keystore.Ref) (string, string) {
	for _, n := range []string{"token", "serial", "slot-id"} {
		if v := r.Attr(n); v != "" {
			return n, v
		}
	}
	return "", ""
}

// moduleName names r's module in messages.
func moduleName(r keystore.Ref) string {
	if m := r.Attr("module-path"); m != "" {
		return m
	}
	return "p11-kit-proxy.so (the default; module-path= names another)"
}

// managerURI is the token's URI for go.step.sm: module, token and
// sessions; never the PIN.
func managerURI(r keystore.Ref) string {
	var attrs []string
	for _, n := range []string{"module-path", "token", "serial", "slot-id", "max-sessions"} {
		if v := r.Attr(n); v != "" {
			attrs = append(attrs, n+"="+url.QueryEscape(v))
		}
	}
	return "pkcs11:" + strings.Join(attrs, ";")
}
