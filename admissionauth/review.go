package admissionauth

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jsonx"
)

// maxReviewDepth bounds the nesting of an AdmissionReview body: room for
// the objects it carries, far below what would exhaust the stack.
const maxReviewDepth = 256

// The AdmissionReview versions kube-apiserver sends.
const (
	AdmissionV1      = "admission.k8s.io/v1"
	AdmissionV1beta1 = "admission.k8s.io/v1beta1"
)

// Review is what the verifier needs of an AdmissionReview: which request
// it is and the API group of the resource it is about.
type Review struct {
	// APIVersion is admission.k8s.io/v1 or v1beta1.
	APIVersion string
	// UID is request.uid.
	UID string
	// Group is request.resource.group: the group of the resource the webhook
	// is asked about ("" for the core group).
	Group string
}

// ParseReview reads the members of an AdmissionReview the verifier needs,
// as strictly as the module reads tokens: strict JSON (valid UTF-8, nesting
// at most 256 deep), apiVersion admission.k8s.io/v1 or v1beta1, kind
// AdmissionReview, a request with a uid and a resource; no member it reads
// given twice or in another case (a case-insensitive decoder would take it
// for the member). Other members are checked for syntax and skipped. Errors
// match [ErrReview].
func ParseReview(body []byte) (Review, error) {
	var rv Review
	r := jsonx.NewReader(body, maxReviewDepth)
	var kind string
	var seenRequest, seenResource bool
	err := readObject(&r, []string{"apiVersion", "kind", "request"}, func(name string) error {
		var err error
		switch name {
		case "apiVersion":
			rv.APIVersion, err = r.String()
		case "kind":
			kind, err = r.String()
		case "request":
			seenRequest = true
			err = readObject(&r, []string{"uid", "resource"}, func(name string) error {
				var err error
				switch name {
				case "uid":
					rv.UID, err = r.String()
				case "resource":
					seenResource = true
					err = readObject(&r, []string{"group"}, func(string) error {
						var err error
						rv.Group, err = r.String()
						return err
					})
				}
				return err
			})
		}
		return err
	})
	if err == nil {
		err = r.End()
	}
	bad := func(reason string, cause error) (Review, error) {
		return Review{}, errs.Wrap(prefix, ErrReview, "not an AdmissionReview: "+reason, cause)
	}
	switch {
	case err != nil:
		return bad("malformed JSON", err)
	case rv.APIVersion != AdmissionV1 && rv.APIVersion != AdmissionV1beta1:
		return bad("apiVersion "+strconv.Quote(rv.APIVersion)+" is not "+AdmissionV1+" or "+AdmissionV1beta1, nil)
	case kind != "AdmissionReview":
		return bad("kind "+strconv.Quote(kind)+" is not AdmissionReview", nil)
	case !seenRequest:
		return bad("no request", nil)
	case rv.UID == "":
		return bad("no request.uid", nil)
	case !seenResource:
		return bad("no request.resource", nil)
	}
	return rv, nil
}

// readObject reads an object, calling read for each member named in want
// (at most once each) and skipping the others; a name equal to a wanted one
// but for case is refused.
func readObject(r *jsonx.Reader, want []string, read func(name string) error) error {
	obj, err := r.Object()
	if err != nil {
		return err
	}
	var seen jsonx.Names
	for {
		name, ok, err := obj.Next()
		if err != nil || !ok {
			return err
		}
		matched := false
		for _, w := range want {
			switch {
			case string(name) == w:
				matched = true
			case strings.EqualFold(string(name), w):
				return errors.New("member " + strconv.Quote(string(name)) + " differs from " + strconv.Quote(w) + " only by case")
			}
		}
		if !matched {
			if err := r.Skip(); err != nil {
				return err
			}
			continue
		}
		if !seen.Add(name) {
			return errors.New("member " + strconv.Quote(string(name)) + " appears twice")
		}
		if err := read(string(name)); err != nil {
			return fmt.Errorf("member %q: %w", name, err)
		}
	}
}
