package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ksa-go/ksa"
)

// maxRedirects bounds the redirects a fetch follows.
const maxRedirects = 3

// maxStatusText bounds the server's status text quoted in a failure.
const maxStatusText = 64

// getRequest is one bounded GET of an issuer's document.
type getRequest struct {
	URL     string
	Client  *http.Client
	Accept  string
	Timeout time.Duration
	// MaxBytes bounds the body; one byte more is a failure.
	MaxBytes int
}

// getResponse is what a successful GET returned.
type getResponse struct {
	Header http.Header
	Body   []byte
}

// getFailure says why a GET failed: Reason for people, Err the cause,
// Status when a response arrived.
type getFailure struct {
	Status int
	Reason string
	Err    error
}

// Error returns the reason and the cause.
func (f *getFailure) Error() string {
	switch {
	case f.Err == nil:
		return f.Reason
	case f.Reason == "":
		return ksa.ErrorText(f.Err)
	}
	return f.Reason + ": " + ksa.ErrorText(f.Err)
}

// Unwrap returns the cause.
func (f *getFailure) Unwrap() error { return f.Err }

// get performs a GET as a relying party does: anonymous, within the
// timeout, status 200 only, at most MaxBytes of body, and never following a
// redirect to plain http or more than maxRedirects.
func get(ctx context.Context, r getRequest) (*getResponse, *getFailure) {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	failed := func(status int, reason string, err error) (*getResponse, *getFailure) {
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason, err = "timed out after "+r.Timeout.String(), nil
		}
		return nil, &getFailure{Status: status, Reason: reason, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return failed(0, "bad request", err)
	}
	req.Header.Set("Accept", r.Accept)
	client := &http.Client{}
	if r.Client != nil {
		c := *r.Client
		client = &c
	}
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if !strings.EqualFold(req.URL.Scheme, "https") {
			return fmt.Errorf("refusing a redirect to %s: not https", req.URL.Redacted())
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		return failed(0, "request failed", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return failed(resp.StatusCode, "unexpected status "+statusLine(resp.StatusCode, resp.Status), nil)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(r.MaxBytes)+1))
	if err != nil {
		return failed(resp.StatusCode, "reading the body", err)
	}
	if len(body) > r.MaxBytes {
		return failed(resp.StatusCode, fmt.Sprintf("body over the %d-byte limit", r.MaxBytes), nil)
	}
	return &getResponse{Header: resp.Header, Body: body}, nil
}

// statusLine returns the code and the server's status text, the text cut
// to maxStatusText bytes of printable ASCII.
func statusLine(code int, status string) string {
	num := strconv.Itoa(code)
	text := strings.TrimPrefix(status, num)
	var b strings.Builder
	b.WriteString(num)
	for i := 0; i < len(text) && b.Len() < len(num)+maxStatusText; i++ {
		if c := text[i]; c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
		}
	}
	if len(text) > maxStatusText+1 {
		b.WriteString("...")
	}
	return strings.TrimRight(b.String(), " ")
}
