package tokencmd

import (
	"errors"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/tokens"
)

// mintError explains why a token cannot be minted, naming the flag at
// fault.
func mintError(err error) error {
	if _, ok := base.AsConfigProblem(err); ok {
		return base.ConfigError(err, base.FlagFor{"MinterConfig.Issuer": "--issuer", "MinterConfig.Signer": "--signing-key"}, "ksa token mint")
	}
	var req *tokens.RequestError
	if !errors.As(err, &req) {
		return base.Fail(nil, "check the flags (see 'ksa token mint --help')", "%s", ksa.ErrorText(err))
	}
	flag, ok := base.FlagFor{"serviceAccount.uid": "--uid", "uid": "--uid", "serviceAccount": "--namespace and --service-account",
		"spec.expirationSeconds": "--duration (10m to 2^32 s)", "spec.audiences": "--audience", "spec.boundObjectRef": "--pod and --pod-uid",
		"node": "--node and --node-uid"}.Flag(req.Field)
	if !ok {
		flag = "the flags"
	}
	return base.Usage("see 'ksa token mint --help' and fix "+flag, "%s", ksa.ErrorText(err))
}
