//go:build (cgo && !ksa_nopkcs11) || !ksa_noawskms || !ksa_nocloudkms || !ksa_noazurekms

package keystores

import (
	"context"
	"crypto/elliptic"
	"errors"
	"fmt"

	"go.step.sm/crypto/kms/apiv1"
)

// algorithm is go.step.sm's name of the key spec asks for, and its size.
func algorithm(spec KeySpec) (apiv1.SignatureAlgorithm, int) {
	switch {
	case spec.RSA:
		return apiv1.SHA256WithRSA, spec.Bits
	case spec.Curve == elliptic.P384():
		return apiv1.ECDSAWithSHA384, 0
	case spec.Curve == elliptic.P521():
		return apiv1.ECDSAWithSHA512, 0
	}
	return apiv1.ECDSAWithSHA256, 0
}

// ctxError is the error of an ended ctx, with its cause.
func ctxError(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, ctx.Err()) {
		return fmt.Errorf("%w: %w", ctx.Err(), cause)
	}
	return ctx.Err()
}
