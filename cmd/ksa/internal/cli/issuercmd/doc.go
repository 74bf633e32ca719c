// Package issuercmd is "ksa issuer": keygen, render, publish, check,
// rotate, register and capi-secret, each a flags struct parsed and handed
// to the library (oidc, publish, rotation, federation/register).
package issuercmd
