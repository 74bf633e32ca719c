// Package podcertcmd is "ksa podcert": serve (the PodCertificateRequest
// signer of the library's podcert controller) and rbac.
package podcertcmd
