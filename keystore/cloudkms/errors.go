package cloudkms

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/stepkms"
)

// classify explains a Cloud KMS failure; what says what failed.
func classify(r keystore.Ref, what string, err error) *keystore.StoreError {
	e := stepkms.StoreError(r, what, "check the key version and ksa's Google credentials", err)
	var (
		gs interface{ GRPCStatus() *status.Status }
		st *status.Status
	)
	if errors.As(err, &gs) {
		st = gs.GRPCStatus()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		e.What = what + ": Google Cloud KMS did not answer"
		e.Fix = "check that cloudkms.googleapis.com is reachable and retry"
	case st == nil:
	case st.Code() == codes.NotFound:
		e.What, e.Detail = what+": Google Cloud KMS has no key version "+r.Attr("resource"), ""
		e.Fix = "check the name (gcloud kms keys versions list --key K --keyring R --location L)"
	case st.Code() == codes.PermissionDenied, st.Code() == codes.Unauthenticated:
		e.Detail = st.Code().String() + ": " + st.Message()
		e.Fix = "grant ksa's Google identity roles/cloudkms.signerVerifier and roles/cloudkms.publicKeyViewer on the key"
	case st.Code() == codes.FailedPrecondition:
		e.Detail = st.Code().String() + ": " + st.Message()
		e.Fix = "enable the key version (it is disabled, destroyed or still being generated)"
	case st.Code() == codes.Unavailable, st.Code() == codes.DeadlineExceeded:
		e.What, e.Detail = what+": Google Cloud KMS did not answer", st.Code().String()+": "+st.Message()
		e.Fix = "check that cloudkms.googleapis.com is reachable and retry"
	default:
		e.Detail = st.Code().String() + ": " + st.Message()
	}
	return e
}
