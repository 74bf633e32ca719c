package ksa

import "errors"

// Sentinel errors of the root package; the typed errors returned carry the
// details and match these with errors.Is.
var (
	// ErrInvalidUsername: a string is not system:serviceaccount:<ns>:<name>
	// with valid parts.
	ErrInvalidUsername = errors.New("ksa: invalid service-account username")
	// ErrInvalidName: a namespace or object name Kubernetes would refuse.
	ErrInvalidName = errors.New("ksa: invalid name")
)
