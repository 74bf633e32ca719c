package apiserver_test

import (
	"crypto/ecdsa"
	"io"
	"net/http"
)

type ecdsaKey = ecdsa.PrivateKey

func ioCopy(w io.Writer, resp *http.Response) (int64, error) { return io.Copy(w, resp.Body) }
