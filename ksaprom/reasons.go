package ksaprom

import (
	"errors"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// reasonNames are the values of the reason label: one short name per
// sentinel tokens.Reason returns, never text from the token.
var reasonNames = []struct {
	err  error
	name string
}{
	{tokens.ErrTooLarge, "too_large"},
	{tokens.ErrMalformed, "malformed"},
	{tokens.ErrUnknownIssuer, "unknown_issuer"},
	{tokens.ErrAlgorithmNotAllowed, "algorithm_not_allowed"},
	{tokens.ErrKeySource, "key_source"},
	{tokens.ErrUnknownKeyID, "unknown_key_id"},
	{jwks.ErrNoKeys, "no_keys"},
	{tokens.ErrTooManyKeys, "too_many_keys"},
	{tokens.ErrBadSignature, "bad_signature"},
	{tokens.ErrAudienceMismatch, "audience_mismatch"},
	{tokens.ErrExpired, "expired"},
	{tokens.ErrNotYetValid, "not_yet_valid"},
	{tokens.ErrIssuedInFuture, "issued_in_future"},
	{tokens.ErrMissingClaim, "missing_claim"},
	{tokens.ErrLegacyToken, "legacy_token"},
	{tokens.ErrServiceAccountNotFound, "service_account_not_found"},
	{tokens.ErrServiceAccountUIDMismatch, "service_account_uid_mismatch"},
	{tokens.ErrServiceAccountDeleted, "service_account_deleted"},
	{tokens.ErrBoundObjectNotFound, "bound_object_not_found"},
	{tokens.ErrBoundObjectUIDMismatch, "bound_object_uid_mismatch"},
	{tokens.ErrBoundObjectDeleted, "bound_object_deleted"},
	{tokens.ErrLookupFailed, "lookup_failed"},
	{tokens.ErrInvalidated, "invalidated"},
}

// signatureChecked are the refusals that come before the signature is
// verified: a token refused for another reason had a valid signature.
var signatureChecked = []error{
	tokens.ErrTooLarge, tokens.ErrMalformed, tokens.ErrUnknownIssuer, tokens.ErrAlgorithmNotAllowed,
	tokens.ErrKeySource, tokens.ErrUnknownKeyID, jwks.ErrNoKeys, tokens.ErrTooManyKeys, tokens.ErrBadSignature,
}

// ReasonName is the reason label of a refusal: a short snake_case name of
// the sentinel tokens.Reason picks ("expired", "bad_signature", ...),
// "other" for an error matching none, "" for nil.
func ReasonName(err error) string {
	if err == nil {
		return ""
	}
	r := tokens.Reason(err)
	for _, n := range reasonNames {
		if r == n.err {
			return n.name
		}
	}
	return "other"
}

// signed reports whether a validation got past the signature check.
func signed(ev tokens.ValidationEvent) bool {
	if ev.Err == nil {
		return true
	}
	for _, e := range signatureChecked {
		if errors.Is(ev.Reason, e) {
			return false
		}
	}
	return ev.Reason != nil
}
