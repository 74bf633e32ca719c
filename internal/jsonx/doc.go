// Package jsonx is the strict, allocation-light JSON reader and writer that
// ksa's token and key-set code is built on.
//
// The reader accepts only RFC 8259 JSON: UTF-8 text, no control characters in
// strings, no lone surrogates, no trailing data, a bounded nesting depth. It
// lets callers walk objects member by member so that duplicate or
// case-variant member names can be refused, which encoding/json silently
// accepts (last value wins, names matched case-insensitively).
//
// The writer escapes strings exactly as the JSON encoder used by
// kube-apiserver's JOSE library (go-jose v2) does, so minted tokens and
// published documents are byte-identical to Kubernetes'.
package jsonx
