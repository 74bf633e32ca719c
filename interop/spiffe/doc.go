// Package spiffe holds ksa's SPIFFE Workload API (package
// podcert/workloadapi, and the ksa spiffe serve sidecar built on it) to
// go-spiffe v2, the SPIFFE project's own Go library: its workloadapi
// client receives the X509-SVIDs and bundles, follows the kubelet's
// rotations and CA rotations, and two of its tlsconfig peers authorize
// each other by SPIFFE ID across them, without a failed handshake. The
// benchmarks and the sidecar test measure the time from a rotation to
// every client's update, the sidecar's binary size and its memory.
package spiffe
