package x509sa

// Size limits. Inputs over a limit are refused with an error matching
// [ErrLimit], naming the size and the limit, before any further work, so
// hostile certificates and requests cost bounded time and memory.
const (
	// MaxSubjectAttributes bounds the attributes of a subject that is
	// decoded: one CN, two O, two pod OUs, one UID and [MaxExtensions]
	// extensions fit with room to spare.
	MaxSubjectAttributes = 32
	// MaxExtensions bounds the caller extensions of a subject.
	MaxExtensions = 16
	// MaxExtensionValueLength bounds the value of one extension, in bytes.
	// Keys are bounded by their syntax (a Kubernetes qualified name: at most
	// 253 bytes of prefix, a slash and 63 bytes of name).
	MaxExtensionValueLength = 256
	// MaxUIDLength bounds the service-account UID, in bytes (the limit
	// Kubernetes applies to the UIDs of a PodCertificateRequest).
	MaxUIDLength = 128
	// MaxSANs bounds the subject alternative names (DNS names, IP addresses,
	// URIs and e-mail addresses together) of a request or certificate.
	MaxSANs = 64
	// MaxHosts bounds the serve hosts given to [SplitHosts] and
	// [CreateCSR], before deduplication.
	MaxHosts = MaxSANs
	// MaxCSRSize bounds a DER certificate request, in bytes.
	MaxCSRSize = 64 << 10
	// MaxCSRPEMSize bounds a PEM certificate request, in bytes.
	MaxCSRPEMSize = 96 << 10
	// MaxChainLength bounds the certificates presented to
	// [Verifier.Verify], leaf included.
	MaxChainLength = 8
	// MaxSPIFFEIDLength is the length up to which SPIFFE implementations
	// must support IDs; longer IDs are refused.
	MaxSPIFFEIDLength = 2048
	// MaxTrustDomainLength is the SPIFFE limit for a trust domain name.
	MaxTrustDomainLength = 255
)
