// Package credspeccmd is "ksa credspec" (generate, crd) and "ksa webhook
// serve", the GMSA credential-spec admission webhook.
package credspeccmd
