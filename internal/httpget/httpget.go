// Package httpget performs the bounded GET that discovery and remote key
// sets share: the caller's context with a timeout, an Accept header,
// optional bearer credentials fetched per request, status 200 required, and
// a body size limit.
package httpget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
)

// Request describes one GET.
type Request struct {
	URL     string
	Client  *http.Client
	Accept  string
	Bearer  func(ctx context.Context) (string, error)
	Timeout time.Duration
	// MaxBytes bounds the body; one byte more is an error.
	MaxBytes int
	// AllowHTTP lets redirects lead to http:// URLs (tests only).
	AllowHTTP bool
}

// MaxRedirects bounds the redirects a GET follows.
const MaxRedirects = 3

// Response is what came back.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Failure says where a GET failed: Reason for people, Err the cause, and
// Status when a response arrived.
type Failure struct {
	Status int
	Reason string
	Err    error
}

// MaxStatusText bounds the status text (the server's words after the code)
// quoted in errors: a server controls it, and it may be long or hold
// control characters.
const MaxStatusText = 64

// Do performs the GET. On failure the response is nil. A failure caused by
// the timeout (while connecting, waiting or reading the body) wraps a
// *TimeoutError, which matches context.DeadlineExceeded.
func Do(ctx context.Context, r Request) (*Response, *Failure) {
	ctx, cancel := context.WithTimeoutCause(ctx, r.Timeout, errTimeout)
	defer cancel()
	fail := func(status int, reason string, err error) (*Response, *Failure) {
		// However the transport words it (a context error, "request
		// canceled", an unexpected EOF), a failure after our own timeout
		// fired is a timeout.
		if err != nil && errors.Is(context.Cause(ctx), errTimeout) {
			err = &TimeoutError{After: r.Timeout, Err: err}
		}
		return nil, &Failure{Status: status, Reason: reason, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return fail(0, "bad request", err)
	}
	req.Header.Set("Accept", r.Accept)
	if r.Bearer != nil {
		tok, err := r.Bearer(ctx)
		if err != nil {
			return fail(0, "getting the bearer token", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	// A copy of the caller's client that never follows a redirect to plain
	// http (which would carry the bearer token and hand the keys to anyone on
	// the path), nor more than MaxRedirects.
	client := &http.Client{}
	if r.Client != nil {
		c := *r.Client
		client = &c
	}
	next := client.CheckRedirect
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= MaxRedirects {
			return fmt.Errorf("stopped after %d redirects", MaxRedirects)
		}
		if !strings.EqualFold(req.URL.Scheme, "https") && !r.AllowHTTP {
			return fmt.Errorf("refusing a redirect to %s: not https", req.URL.Redacted())
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		return fail(0, "request failed", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(resp.StatusCode, "unexpected status "+StatusLine(resp.StatusCode, resp.Status), nil)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(r.MaxBytes)+1))
	if err != nil {
		return fail(resp.StatusCode, "reading the body", err)
	}
	if len(body) > r.MaxBytes {
		return fail(resp.StatusCode, "", &TooLargeError{Limit: r.MaxBytes})
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// StatusLine returns the code and the server's status text, the text cut
// to MaxStatusText bytes of printable ASCII.
func StatusLine(code int, status string) string {
	text := strings.TrimPrefix(status, strconv.Itoa(code))
	var b strings.Builder
	b.WriteString(strconv.Itoa(code))
	for i := 0; i < len(text) && b.Len() < len(strconv.Itoa(code))+MaxStatusText; i++ {
		if c := text[i]; c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
		}
	}
	if len(text) > MaxStatusText+1 {
		b.WriteString("...")
	}
	return strings.TrimRight(b.String(), " ")
}

// TooLargeError reports a body over the limit.
type TooLargeError struct{ Limit int }

func (e *TooLargeError) Error() string {
	return "body over the " + strconv.Itoa(e.Limit) + "-byte limit"
}

// errTimeout is the cause of the context of a GET whose timeout fired.
var errTimeout = errs.New("httpget", "timeout")

// TimeoutError reports a GET that ran out of time; it matches
// context.DeadlineExceeded.
type TimeoutError struct {
	After time.Duration
	Err   error
}

func (e *TimeoutError) Error() string {
	return "timed out after " + e.After.String()
}

// Is reports whether target is context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// Unwrap returns the transport's error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Describe formats a failed GET the way the callers' error types print it:
// "<prefix>: <what> <url>: <reason>: <cause>", leaving out what is empty and
// the cause's own ksa prefix.
func Describe(prefix, what, url, reason string, err error) string {
	msg := what + " " + url
	if reason != "" {
		msg += ": " + reason
	}
	return errs.Msg(prefix, msg, err)
}
