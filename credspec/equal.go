package credspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jsonx"
)

// MaxSize is the largest credential spec, in bytes, this package parses or
// renders: Kubernetes' limit on a pod's gmsaCredentialSpec field (64 KiB;
// exactly 65536 bytes is allowed, 65537 is not).
const MaxSize = 64 * 1024

// Equal reports whether a pod's inlined credential spec and a
// GMSACredentialSpec object's contents are the same, with windows-gmsa's
// semantics:
//   - byte-identical texts are equal without being parsed;
//   - otherwise both must be JSON objects (an error matching
//     [ErrInvalidSpec] otherwise, with windows-gmsa's message; the literal
//     null parses, as a nil object);
//   - whitespace and object key order are ignored;
//   - keys and string values are case-sensitive, arrays order-sensitive;
//   - numbers compare as float64 (1 equals 1.0, not "1");
//   - duplicate keys: the last one wins;
//   - strings compare decoded ("\u003c" equals "<"), and invalid UTF-8
//     decodes to U+FFFD.
//
// The order of the arguments only decides which one the error names
// (objectValue as "CRD"). Inputs over [MaxSize] are refused ([ErrTooLarge])
// before anything else; Kubernetes refuses such pods.
func Equal(podValue, objectValue string) (bool, error) {
	if err := checkSize(podValue); err != nil {
		return false, err
	}
	if err := checkSize(objectValue); err != nil {
		return false, err
	}
	if podValue == objectValue {
		return true, nil
	}
	a, err := parseObject(podValue, false)
	if err != nil {
		return false, err
	}
	b, err := parseObject(objectValue, true)
	if err != nil {
		return false, err
	}
	if (a == nil) != (b == nil) {
		return false, nil
	}
	return equalMaps(a, b), nil
}

// Canonical renders a credential spec the way windows-gmsa inlines it: the
// JSON object as an apimachinery client decodes and encoding/json
// re-encodes it: compact, keys sorted, <, > and & escaped as \u003c, \u003e
// and \u0026, integers kept exact, other numbers as float64. Inputs and
// outputs over [MaxSize] are refused ([ErrTooLarge]); input that is not a
// JSON object matches [ErrInvalidSpec]. Canonical of null is null.
//
// Byte-equal canonical forms are [Equal].
func Canonical(value string) (string, error) {
	if err := checkSize(value); err != nil {
		return "", err
	}
	b := []byte(value)
	if !json.Valid(b) {
		// Unmarshal for encoding/json's syntax error and its message.
		var m map[string]any
		return "", notJSONObject(value, false, json.Unmarshal(b, &m))
	}
	// Valid rules out trailing data, so one Decode reads it all.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return "", notJSONObject(value, false, err)
	}
	if err := normalizeNumbers(m); err != nil {
		return "", notJSONObject(value, false, err)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return "", notJSONObject(value, false, err)
	}
	if len(out) > MaxSize {
		return "", tooLarge("canonical credential spec", int64(len(out)), MaxSize)
	}
	return string(out), nil
}

func checkSize(s string) error {
	if len(s) > MaxSize {
		return tooLarge("credential spec", int64(len(s)), MaxSize)
	}
	return nil
}

// parseObject decodes as windows-gmsa does: json.Unmarshal into a map.
func parseObject(s string, object bool) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, notJSONObject(s, object, err)
	}
	return m, nil
}

// equalMaps is reflect.DeepEqual for the values encoding/json produces.
func equalMaps(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !equalValues(va, vb) {
			return false
		}
	}
	return true
}

func equalValues(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case string:
		b, ok := b.(string)
		return ok && a == b
	case float64:
		b, ok := b.(float64)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case map[string]any:
		b, ok := b.(map[string]any)
		return ok && equalMaps(a, b)
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalValues(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// normalizeNumbers applies apimachinery's JSON number rule: a number that
// parses as int64 stays an int64, any other becomes a float64.
func normalizeNumbers(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			n, err := normalizeValue(e)
			if err != nil {
				return err
			}
			v[k] = n
		}
	case []any:
		for i, e := range v {
			n, err := normalizeValue(e)
			if err != nil {
				return err
			}
			v[i] = n
		}
	}
	return nil
}

func normalizeValue(v any) (any, error) {
	n, ok := v.(json.Number)
	if !ok {
		return v, normalizeNumbers(v)
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// checkUnambiguous refuses a credential spec that parsers may read
// differently: a member name twice in one object, at any depth (Equal
// keeps the last value, as encoding/json does; other parsers, perhaps the
// container runtime's, keep the first), or text that is not strict JSON
// (invalid UTF-8 and lone surrogates, which decoders replace or reject
// each their own way). The error matches [ErrAmbiguousSpec].
func checkUnambiguous(value string) error {
	var dup *jsonx.Member
	err := jsonx.Walk([]byte(value), maxSpecDepth, func(m jsonx.Member) bool {
		if m.Repeated && dup == nil {
			dup = &m
		}
		return false
	})
	if err != nil {
		return errs.Wrap(prefix, ErrAmbiguousSpec, "not strict JSON", err)
	}
	if dup != nil {
		return errs.Wrap(prefix, ErrAmbiguousSpec, fmt.Sprintf("member %q appears twice in %s", dup.Name, dup.Path), nil)
	}
	return nil
}

// maxSpecDepth bounds the nesting checkUnambiguous reads: far above the
// three levels of a credential spec.
const maxSpecDepth = 64
