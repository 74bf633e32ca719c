package jwxkeys

import (
	"encoding/json"

	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/ksa-go/ksa/jwks"
)

// ToSet converts ksa keys to a jwx set: each key's public half only, with
// its kid and alg, as ksa renders JWKS (jwks.MarshalSet). Verify-only keys
// (ExcludeFromDiscovery) are included: the set is for verification.
func ToSet(keys []jwks.Key) (jwk.Set, error) {
	doc, err := jwks.MarshalSet(keys)
	if err != nil {
		return nil, err
	}
	set, err := jwk.Parse(doc)
	if err != nil {
		return nil, convertError("the key set to jwx", err)
	}
	return set, nil
}

// FromSet converts a jwx set to ksa keys, always through ksa's public-only
// audit: a set holding private or symmetric material anywhere (an RSA or
// EC private key, an oct key with "k", which jwx's jwk.PublicSetOf kept
// before v3.3 and keeps with WithAllowSymmetric) is refused whole, with jwks.Audit's *MemberError for each
// problem. The keys then pass jwks.ParseSet's checks with opts' limits;
// keys it skips (an unsupported curve, a weak RSA modulus, use "enc") are
// returned in Set.Skipped, not as keys.
func FromSet(set jwk.Set, opts jwks.ParseOptions) (*jwks.Set, error) {
	doc, err := json.Marshal(set)
	if err != nil {
		return nil, convertError("the jwx set for the audit", err)
	}
	if err := jwks.Audit(doc); err != nil {
		return nil, err
	}
	return jwks.ParseSet(doc, opts)
}
