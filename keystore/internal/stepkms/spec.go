package stepkms

import (
	"crypto/elliptic"
	"fmt"
	"slices"

	"go.step.sm/crypto/kms/apiv1"

	"github.com/ksa-go/ksa/keystore"
)

// Algorithm is go.step.sm's name of the key spec asks for, and its size.
func Algorithm(spec keystore.KeySpec) (apiv1.SignatureAlgorithm, int) {
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

// Supports refuses a key a cloud key store does not make: RSA of other
// sizes than bits, a curve not in curves.
func Supports(r keystore.Ref, store string, spec keystore.KeySpec, bits []int, curves ...elliptic.Curve) error {
	if spec.RSA && slices.Contains(bits, spec.Bits) || !spec.RSA && slices.Contains(curves, spec.Curve) {
		return nil
	}
	var names []string
	for _, c := range curves {
		names = append(names, c.Params().Name)
	}
	return StoreError(r, fmt.Sprintf("%s does not make %s keys", store, spec),
		fmt.Sprintf("make an RSA key of %v bits or an ECDSA key on %v", bits, names), nil)
}
