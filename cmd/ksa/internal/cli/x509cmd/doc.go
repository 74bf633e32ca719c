// Package x509cmd is "ksa x509": inspect (the identity a certificate or a
// CSR holds) and csr.
package x509cmd
