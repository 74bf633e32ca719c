package base

import (
	"errors"
	"io"
	"io/fs"
	"strings"

	"github.com/ksa-go/ksa/tokens"
)

// ReadToken reads a token from a file or standard input, bounded by the
// validator's size limit, without surrounding white space or "Bearer ".
func ReadToken(name string, stdin io.Reader) (string, error) {
	data, err := ReadInput(name, stdin, tokens.DefaultMaxTokenBytes)
	switch {
	case errors.Is(err, ErrTooLarge):
		return "", Fail(nil, "pass one service-account token, a compact JWT (kube-apiserver's are about 1 KiB)",
			"%s is over the %d-byte token limit", InputName(name), tokens.DefaultMaxTokenBytes)
	case errors.Is(err, fs.ErrNotExist):
		return "", Fail(nil, "check the path (a pod's projected token is usually /var/run/secrets/tokens/...)", "token file %s does not exist", name)
	case err != nil:
		return "", Fail(err, "pass a readable token file, or - for standard input", "reading the token from %s", InputName(name))
	}
	tok := strings.TrimSpace(string(data))
	tok = strings.TrimSpace(strings.TrimPrefix(tok, "Bearer "))
	if tok == "" {
		return "", Fail(nil, "pass a file holding a token, e.g. from kubectl create token NAME", "%s is empty", InputName(name))
	}
	return tok, nil
}
