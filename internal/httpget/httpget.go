// Package httpget performs the bounded GET that discovery and remote key
// sets share: the caller's context with a timeout, an Accept header,
// optional bearer credentials fetched per request, status 200 required, and
// a body size limit.
package httpget

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
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

// Do performs the GET. On failure the response is nil.
func Do(ctx context.Context, r Request) (*Response, *Failure) {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return nil, &Failure{Reason: "bad request", Err: err}
	}
	req.Header.Set("Accept", r.Accept)
	if r.Bearer != nil {
		tok, err := r.Bearer(ctx)
		if err != nil {
			return nil, &Failure{Reason: "getting the bearer token", Err: err}
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
		return nil, &Failure{Reason: "request failed", Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &Failure{Status: resp.StatusCode, Reason: "unexpected status " + resp.Status}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(r.MaxBytes)+1))
	if err != nil {
		return nil, &Failure{Status: resp.StatusCode, Reason: "reading the body", Err: err}
	}
	if len(body) > r.MaxBytes {
		return nil, &Failure{Status: resp.StatusCode, Reason: "body over the size limit", Err: &TooLargeError{Limit: r.MaxBytes}}
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// TooLargeError reports a body over the limit.
type TooLargeError struct{ Limit int }

func (e *TooLargeError) Error() string {
	return "body over the " + strconv.Itoa(e.Limit) + "-byte limit"
}

// Describe formats a failed GET the way the callers' error types print it:
// "<what> <url> (HTTP <status>): <reason>: <cause>", leaving out what is
// unknown.
func Describe(what, url string, status int, reason string, err error) string {
	msg := what + " " + url
	if status != 0 {
		msg += " (HTTP " + strconv.Itoa(status) + ")"
	}
	msg += ": " + reason
	if err != nil {
		msg += ": " + err.Error()
	}
	return msg
}
