package credprovider

import (
	"context"
	"io"
)

// Provider answers one request of the kubelet: it returns the response
// (built with [Respond] or [PassThrough]) or an error, which Run reports.
type Provider interface {
	Provide(ctx context.Context, req *Request) (*Response, error)
}

// ProviderFunc is a function that is a [Provider].
type ProviderFunc func(ctx context.Context, req *Request) (*Response, error)

// Provide calls f.
func (f ProviderFunc) Provide(ctx context.Context, req *Request) (*Response, error) {
	return f(ctx, req)
}

// Run is a plugin's main loop: it decodes the one request the kubelet
// writes to stdin ([DecodeRequest]), asks p, and writes the response to
// stdout. On any failure it writes nothing to stdout and returns the
// error, which the program prints on one line of stderr before exiting
// non-zero; the kubelet then pulls without these credentials and logs the
// line. A provider's error is returned as it is; the package's own never
// quote the token or a credential.
//
// The kubelet kills a plugin after one minute: bound ctx by less, so that
// a hung exchange ends with the plugin's own message.
func Run(ctx context.Context, stdin io.Reader, stdout io.Writer, p Provider) error {
	req, err := DecodeRequest(stdin)
	if err != nil {
		return err
	}
	resp, err := p.Provide(ctx, req)
	if err != nil {
		return err
	}
	if resp == nil {
		return invalidResponse("the provider returned no response")
	}
	return resp.Encode(stdout)
}
