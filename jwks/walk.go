package jwks

import (
	"fmt"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jsonx"
)

// privateMembers are the JWK members that hold private or symmetric key
// material (RFC 7518 §6.2.2, §6.3.2, §6.4.1; RFC 8037 §2).
var privateMembers = [...]string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// publicMembers are the JWK members ParseSet reads. A member whose name
// differs from one of them only in case is refused: encoding/json matches
// names case-insensitively, so another reader could take it for the member.
var publicMembers = [...]string{"kty", "use", "kid", "alg", "crv", "n", "e", "x", "y", "key_ops"}

// rawJWK is one key object of a key set, as read, before it is turned into a
// Key.
type rawJWK struct {
	index int
	// object is false for an element of the keys array that is not an
	// object.
	object                 bool
	kty, use, kid, alg     string
	crv, n, e, x, y        []byte // member values, still base64url / names
	hasKeyOps, keyOpVerify bool
	// private lists the private or symmetric members present.
	private []string
	// nested names a member whose value holds a private or symmetric
	// member somewhere inside it, when hasNested is set (the name may be
	// empty).
	nested    string
	hasNested bool
	// problem is the first member that could not be read, or was repeated.
	problem *MemberError
	seen    jsonx.Names
}

func (j *rawJWK) fail(member, reason string, err error) {
	if j.problem == nil {
		j.problem = &MemberError{Index: j.index, Member: member, Reason: reason, Kind: ErrUnsupportedKey, Err: err}
	}
}

// walkSet reads a key set document and calls visit for each element of its
// keys array. A non-object element is passed as a rawJWK with a problem. The
// error matches ErrMalformedSet or ErrSetTooLarge for a document that
// cannot be read; maxKeys <= 0
// means no count limit.
func walkSet(doc []byte, maxKeys int, visit func(*rawJWK)) error {
	r := jsonx.NewReader(doc, 0)
	top, err := r.Object()
	if err != nil {
		return errs.Wrap(prefix, ErrMalformedSet, "document is not a JSON object", err)
	}
	found := false
	for {
		name, ok, err := top.Next()
		if err != nil {
			return errs.Wrap(prefix, ErrMalformedSet, "document is not valid JSON", err)
		}
		if !ok {
			break
		}
		if string(name) != "keys" {
			if strings.EqualFold(string(name), "keys") {
				// encoding/json would read this as the key set.
				return errs.Wrap(prefix, ErrMalformedSet, fmt.Sprintf("member %q differs from \"keys\" only in case", name), nil)
			}
			if err := r.Skip(); err != nil {
				return errs.Wrap(prefix, ErrMalformedSet, "document is not valid JSON", err)
			}
			continue
		}
		if found {
			return errs.Wrap(prefix, ErrMalformedSet, `member "keys" appears twice`, nil)
		}
		found = true
		arr, err := r.Array()
		if err != nil {
			return errs.Wrap(prefix, ErrMalformedSet, `member "keys" is not an array`, err)
		}
		for i := 0; ; i++ {
			more, err := arr.Next()
			if err != nil {
				return errs.Wrap(prefix, ErrMalformedSet, "document is not valid JSON", err)
			}
			if !more {
				break
			}
			if maxKeys > 0 && i >= maxKeys {
				return errs.Wrap(prefix, ErrSetTooLarge, fmt.Sprintf("more than %d keys", maxKeys), nil)
			}
			j := &rawJWK{index: i}
			if err := readJWK(&r, j); err != nil {
				return errs.Wrap(prefix, ErrMalformedSet, "document is not valid JSON", err)
			}
			visit(j)
		}
	}
	if err := r.End(); err != nil {
		return errs.Wrap(prefix, ErrMalformedSet, "document is not valid JSON", err)
	}
	if !found {
		return errs.Wrap(prefix, ErrMalformedSet, `document has no "keys" member`, nil)
	}
	return nil
}

// readJWK reads one element of the keys array into j. Problems with the key
// itself are recorded on j; the error is for JSON that cannot be read.
func readJWK(r *jsonx.Reader, j *rawJWK) error {
	if r.Peek() != '{' {
		j.fail("", "key is not a JSON object", nil)
		// Not a key, but private material inside it is still reported
		// as such (an array holding a private JWK, say).
		return r.WalkValue("", func(m jsonx.Member) bool {
			if isPrivateMember(m.Name) && !j.hasNested {
				j.hasNested = true
			}
			return false
		})
	}
	obj, err := r.Object()
	if err != nil {
		return err
	}
	j.object = true
	for {
		name, ok, err := obj.Next()
		if err != nil || !ok {
			return err
		}
		member := string(name)
		if !j.seen.Add(name) {
			j.fail(member, "member appears twice", nil)
		}
		if isPrivateMember(member) {
			j.private = append(j.private, member)
			if err := r.Skip(); err != nil {
				return err
			}
			continue
		}
		var dst *[]byte
		var str *string
		switch member {
		case "kty":
			str = &j.kty
		case "use":
			str = &j.use
		case "kid":
			str = &j.kid
		case "alg":
			str = &j.alg
		case "crv":
			dst = &j.crv
		case "n":
			dst = &j.n
		case "e":
			dst = &j.e
		case "x":
			dst = &j.x
		case "y":
			dst = &j.y
		case "key_ops":
			if err := readKeyOps(r, j); err != nil {
				return err
			}
			continue
		default:
			for _, m := range publicMembers {
				if strings.EqualFold(member, m) {
					j.fail(member, fmt.Sprintf("member name differs from %q only in case", m), nil)
					break
				}
			}
			// An unknown member is not read, but private material inside
			// it still marks the key as leaked.
			err := r.WalkValue("", func(m jsonx.Member) bool {
				if isPrivateMember(m.Name) && !j.hasNested {
					j.nested, j.hasNested = member, true
				}
				return false
			})
			if err != nil {
				return err
			}
			continue
		}
		if r.Peek() != '"' {
			j.fail(member, "member is not a string", nil)
			if err := r.Skip(); err != nil {
				return err
			}
			continue
		}
		v, err := r.StringBytes()
		if err != nil {
			return err
		}
		if str != nil {
			*str = string(v)
		} else {
			*dst = append([]byte(nil), v...)
		}
	}
}

func readKeyOps(r *jsonx.Reader, j *rawJWK) error {
	j.hasKeyOps = true
	if r.Peek() != '[' {
		j.fail("key_ops", "member is not an array", nil)
		return r.Skip()
	}
	arr, err := r.Array()
	if err != nil {
		return err
	}
	for {
		more, err := arr.Next()
		if err != nil || !more {
			return err
		}
		if r.Peek() != '"' {
			j.fail("key_ops", "member holds a non-string", nil)
			if err := r.Skip(); err != nil {
				return err
			}
			continue
		}
		op, err := r.StringBytes()
		if err != nil {
			return err
		}
		if string(op) == "verify" {
			j.keyOpVerify = true
		}
	}
}

// isPrivateMember reports whether name is a private or symmetric member,
// in any case: encoding/json would read "D" into a field tagged "d".
func isPrivateMember(name string) bool {
	for _, m := range privateMembers {
		if strings.EqualFold(name, m) {
			return true
		}
	}
	return false
}
