package cli

import (
	"errors"
	"io"
	"os"
)

// errTooLarge marks an input over its size limit.
var errTooLarge = errors.New("over the size limit")

// readInput reads a file, or standard input for "-" or "", refusing more
// than limit bytes.
func readInput(name string, stdin io.Reader, limit int64) ([]byte, error) {
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
		return nil, errTooLarge
	}
	return data, nil
}

// inputName names an input in messages.
func inputName(name string) string {
	if name == "" || name == "-" {
		return "standard input"
	}
	return name
}
