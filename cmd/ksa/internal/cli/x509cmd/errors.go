package x509cmd

import (
	"errors"
	"strings"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/x509sa"
)

// csrError explains why a certificate request cannot be made, naming the
// flag at fault.
func csrError(err error) error {
	if _, ok := base.AsConfigProblem(err); ok {
		return base.ConfigError(err, base.FlagFor{"Lifetime": "--lifetime", "Name": "--name", "SignerName": "--signer-name",
			"Usage": "--usage", "TrustDomain": "--trust-domain", "Hosts": "--host"}, "ksa x509 csr")
	}
	flag := ""
	switch {
	case errors.Is(err, x509sa.ErrInvalidSignerName):
		flag = "--signer-name"
	case errors.Is(err, x509sa.ErrInvalidSPIFFEID):
		flag = "--trust-domain"
	case errors.Is(err, x509sa.ErrInvalidHost), errors.Is(err, x509sa.ErrLimit):
		flag = "--host"
	case errors.Is(err, x509sa.ErrLifetime):
		flag = "--lifetime"
	case errors.Is(err, x509sa.ErrInvalidUsage):
		flag = "--usage"
	case errors.Is(err, jwks.ErrUnsupportedKey):
		flag = "--key"
	case errors.Is(err, x509sa.ErrInvalidSubject):
		flag = subjectFlag(ksa.ErrorText(err))
	}
	msg := base.FlagFor{"ServerAuth": "--usage server", "ClientAuth": "--usage client"}.Words(ksa.ErrorText(err))
	if flag == "" {
		return base.Fail(nil, "check the flags (see 'ksa x509 csr --help')", "%s", msg)
	}
	return base.Usage(base.FlagFix(flag, "ksa x509 csr"), "%s", msg)
}

// subjectFlag names the flag behind a subject the library refused, from
// the attribute its message names first.
func subjectFlag(msg string) string {
	switch {
	case strings.Contains(msg, "UID"):
		return "--uid"
	case strings.Contains(msg, "pod"):
		return "--pod"
	}
	return "--namespace and --service-account"
}
