package base

import (
	"errors"
	"io"
	"os"
)

// ErrTooLarge marks an input over its size limit.
var ErrTooLarge = errors.New("over the size limit")

// ReadInput reads a file, or standard input for "-" or "", refusing more
// than limit bytes.
func ReadInput(name string, stdin io.Reader, limit int64) ([]byte, error) {
	r := stdin
	if name == "" || name == "-" {
		if r == nil {
			return nil, errors.New("standard input is not available here")
		}
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, ErrTooLarge
	}
	return data, nil
}

// InputName names an input in messages.
func InputName(name string) string {
	if name == "" || name == "-" {
		return "standard input"
	}
	return name
}

// MaxCertFile bounds the certificate files read.
const MaxCertFile = 1 << 20
