// Package apisnap writes the exported API of the module's library packages
// as text, one line per exported declaration, so that a change to the API
// shows as a diff of the files under api/ and is made on purpose.
//
// Its test compares the API of every package of the module (internal
// packages, commands and examples aside) with api/<package path>.txt and
// fails with the lines added and removed; run with -update it rewrites
// the files:
//
//	$ go test ./internal/apisnap -update
//
// A line is one of:
//
//	# the line                      what it declares
//	const Name T = value            a constant, its type and exact value
//	                                (a time.Duration's also as "(24h0m0s)")
//	var Name T                      a variable
//	func Name(T1, T2) (R1, error)   a function, its parameter and result types
//	type Name struct                a type, then one line per exported field:
//	type Name struct, Field T       (embedded ones as "embedded T")
//	type Name interface { M, N }    an interface, then one line per method:
//	type Name interface, M(T) R
//	type Name underlying            any other defined type
//	type Name = T                   an alias
//	method (*Name) M(T) R           a method of Name's method set, promoted
//	                                ones included; (Name) when a value has it
//
// Types from other packages are written with their full import path
// (k8s.io/api/certificates/v1.PodCertificateRequest); the package's own
// are written bare. Lines are sorted. The packages are type-checked for
// linux/amd64, whatever the host, so the files do not depend on where the
// test runs.
package apisnap
