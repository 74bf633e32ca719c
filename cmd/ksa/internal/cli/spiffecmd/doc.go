// Package spiffecmd is "ksa spiffe serve": a pod's certificate served over
// the SPIFFE Workload API.
package spiffecmd
