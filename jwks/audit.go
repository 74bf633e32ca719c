package jwks

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jsonx"
)

// Audit checks a JWKS document, ours or anyone's, before it is published or
// trusted: every key must be a JSON object of type RSA, EC or OKP, and no
// object anywhere in the document (a key, a member nested inside a key, a
// sibling of "keys", an element of an array) may hold a private or
// symmetric member (d, p, q, dp, dq, qi, oth, k). Member names are compared
// after JSON unescaping and without regard to case ("D" is private too, as
// encoding/json would read it as "d"). A member given twice in a key and a
// key member whose name differs from a JWK member's only in case fail the
// audit too. It returns nil for a clean document, otherwise every problem
// found, in document order; each is a *MemberError matching
// [ErrPrivateMaterial], [ErrUnknownKeyType] or [ErrUnsupportedKey] (Index
// is -1 for a member outside the keys, Path says where it is), or a single
// error matching [ErrMalformedSet] for a document that is not a key set
// (which includes a document with a member spelling "keys" in another
// case).
func Audit(doc []byte) error {
	byKey := map[int][]error{}
	kids := map[int]string{}
	nkeys := 0
	err := walkSet(doc, 0, func(j *rawJWK) {
		nkeys = j.index + 1
		kids[j.index] = j.kid
		add := func(e error) { byKey[j.index] = append(byKey[j.index], e) }
		for _, m := range j.private {
			add(&MemberError{Index: j.index, KeyID: j.kid, Member: m, Reason: "private or symmetric key member", Kind: ErrPrivateMaterial})
		}
		if j.problem != nil {
			p := *j.problem
			p.KeyID = j.kid
			add(&p)
		}
		if !j.object {
			return // reported above; it has no kty to check
		}
		switch j.kty {
		case "RSA", "EC", "OKP":
		default:
			add(&MemberError{Index: j.index, KeyID: j.kid, Member: "kty", Reason: fmt.Sprintf("key type %q is not RSA, EC or OKP", j.kty), Kind: ErrUnknownKeyType})
		}
	})
	if err != nil {
		return err
	}
	// Private members anywhere else: nested inside a key's other members,
	// beside "keys", in arrays. A key's own members were reported above;
	// the value of a private member is not searched further.
	var outside []error
	err = jsonx.Walk(doc, 0, func(m jsonx.Member) bool {
		if !isPrivateMember(m.Name) {
			return false
		}
		index, inKey, direct := keyPath(m.Path)
		if direct {
			return true
		}
		e := &MemberError{Index: -1, Path: m.Path, Member: m.Name, Reason: "private or symmetric key member", Kind: ErrPrivateMaterial}
		if inKey {
			e.Index, e.KeyID = index, kids[index]
			byKey[index] = append(byKey[index], e)
		} else {
			outside = append(outside, e)
		}
		return true
	})
	if err != nil {
		return errs.Wrap(prefix, ErrMalformedSet, "document is not valid JSON", err)
	}
	var all []error
	for i := range nkeys {
		all = append(all, byKey[i]...)
	}
	all = append(all, outside...)
	return errs.Join(prefix, fmt.Sprintf("the key set fails the audit (%d problems)", len(all)), all)
}

// keyPath reads a Walk path: whether it lies within $.keys[i] (inKey, with
// its index) and whether it is that key object itself (direct).
func keyPath(path string) (index int, inKey, direct bool) {
	rest, ok := strings.CutPrefix(path, "$.keys[")
	if !ok {
		return 0, false, false
	}
	end := strings.IndexByte(rest, ']')
	if end <= 0 {
		return 0, false, false
	}
	n, err := strconv.Atoi(rest[:end])
	if err != nil {
		return 0, false, false
	}
	return n, true, end == len(rest)-1
}
