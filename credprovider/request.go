package credprovider

import (
	"errors"
	"io"

	"github.com/ksa-go/ksa/internal/jsonx"
)

// The exec protocol's group version and the kinds of its two objects.
const (
	// APIVersion is the only apiVersion this package reads and writes:
	// the kubelet's credentialprovider.kubelet.k8s.io/v1.
	APIVersion = "credentialprovider.kubelet.k8s.io/v1"
	// RequestKind is the kind of the object the kubelet writes to the
	// plugin's standard input.
	RequestKind = "CredentialProviderRequest"
	// ResponseKind is the kind of the object the plugin writes back.
	ResponseKind = "CredentialProviderResponse"
)

// MaxRequestBytes bounds the request DecodeRequest reads: 2 MiB. The
// kubelet's request holds an image name, one service-account token (ksa
// refuses tokens over 16 KiB) and the service account's annotations that
// the config names, which the apiserver bounds to 256 KiB in all; JSON may
// escape each byte of them as six (\u003c), so 2 MiB holds the largest
// request a kubelet can send. A larger input is refused unread.
const MaxRequestBytes = 2 << 20

// maxDepth is the deepest nesting a request has: the request object and
// its annotations object.
const maxDepth = 2

// Request is the kubelet's CredentialProviderRequest: the image to pull
// and, when the provider's config sets tokenAttributes, a service-account
// token bound to the pod being started and the annotations of its service
// account that the config names.
type Request struct {
	// Image is the image being pulled ("registry.example/team/app:v1",
	// as the pod names it).
	Image string
	// ServiceAccountToken is the pod's token for the audience of
	// tokenAttributes.serviceAccountTokenAudience; empty when the config
	// sets no tokenAttributes, or for a pod without a service account when
	// requireServiceAccount is false.
	ServiceAccountToken string
	// ServiceAccountAnnotations are the annotations of the pod's service
	// account whose keys the config lists (required and optional ones
	// present); nil when there are none.
	ServiceAccountAnnotations map[string]string
}

// DecodeRequest reads one request from r, strictly: at most
// MaxRequestBytes, one JSON object of apiVersion APIVersion and kind
// RequestKind, no member the protocol does not define, none twice, names
// matched exactly (encoding/json would take "IMAGE" for image), a
// non-empty image. Errors match [ErrMalformedRequest] or
// [ErrRequestTooLarge], or are the reader's own.
func DecodeRequest(r io.Reader) (*Request, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxRequestBytes+1))
	if err != nil {
		return nil, err
	}
	return ParseRequest(data)
}

// ParseRequest parses a request held in memory, as [DecodeRequest] does.
func ParseRequest(data []byte) (*Request, error) {
	if len(data) > MaxRequestBytes {
		return nil, ErrRequestTooLarge
	}
	rd := jsonx.NewReader(data, maxDepth)
	obj, err := rd.Object()
	if err != nil {
		return nil, malformedCause("not a JSON object", err)
	}
	var (
		req                 Request
		seen                jsonx.Names
		apiVersion, kind    string
		hasVersion, hasKind bool
	)
	for {
		name, ok, err := obj.Next()
		if err != nil {
			return nil, malformedCause("reading the object", err)
		}
		if !ok {
			break
		}
		if !seen.Add(name) {
			return nil, malformed("member %q appears twice", name)
		}
		switch string(name) {
		case "apiVersion":
			apiVersion, err = rd.String()
			hasVersion = true
		case "kind":
			kind, err = rd.String()
			hasKind = true
		case "image":
			req.Image, err = rd.String()
		case "serviceAccountToken":
			req.ServiceAccountToken, err = rd.String()
		case "serviceAccountAnnotations":
			req.ServiceAccountAnnotations, err = readAnnotations(&rd)
		default:
			return nil, malformed("unknown member %q", name)
		}
		if err != nil {
			return nil, malformedCause(string(name), err)
		}
	}
	if err := rd.End(); err != nil {
		return nil, malformedCause("after the object", err)
	}
	switch {
	case !hasVersion || apiVersion != APIVersion:
		return nil, malformed("apiVersion is %q, want %q", apiVersion, APIVersion)
	case !hasKind || kind != RequestKind:
		return nil, malformed("kind is %q, want %q", kind, RequestKind)
	case req.Image == "":
		return nil, malformed("image is empty")
	}
	return &req, nil
}

// readAnnotations reads the annotations object: string values, each key
// once; null reads as none.
func readAnnotations(rd *jsonx.Reader) (map[string]string, error) {
	if rd.Null() {
		return nil, nil
	}
	obj, err := rd.Object()
	if err != nil {
		return nil, err
	}
	var (
		out  map[string]string
		seen jsonx.Names
	)
	for {
		name, ok, err := obj.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		if !seen.Add(name) {
			return nil, errors.New("an annotation key appears twice")
		}
		key := string(name)
		value, err := rd.String()
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = make(map[string]string)
		}
		out[key] = value
	}
}
