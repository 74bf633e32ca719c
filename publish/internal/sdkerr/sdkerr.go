// Package sdkerr sums up a cloud SDK's errors for the store packages: the
// SDKs print whole responses, a store's error says a few words and wraps
// the SDK's error.
package sdkerr

import "strings"

// cause is an SDK error summed up in a few words, still wrapping it.
type cause struct {
	msg string
	err error
}

func (c *cause) Error() string { return c.msg }
func (c *cause) Unwrap() error { return c.err }

// Summed wraps err with a short message; nil for a nil err.
func Summed(msg string, err error) error {
	if err == nil {
		return nil
	}
	return &cause{msg: msg, err: err}
}

// FirstLine returns the first line of a message (the SDKs' run to pages).
func FirstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}
