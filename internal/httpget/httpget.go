// Package httpget performs the bounded GET that discovery and remote key
// sets share: the caller's context with a timeout, an Accept header,
// optional bearer credentials fetched per request, status 200 required, and
// a body size limit.
package httpget

import (
	"context"
	"io"
	"net/http"
	"strconv"
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
}

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
	client := r.Client
	if client == nil {
		client = &http.Client{}
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
