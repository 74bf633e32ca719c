// Package keyflags is the key flags the command groups share: a key
// by reference (a PEM file or a key-store URI), its type (--type, --bits,
// --curve), the key pairs written, and the ring files of ksa signer serve.
package keyflags
