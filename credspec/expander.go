package credspec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"

	corev1 "k8s.io/api/core/v1"

	"github.com/ksa-go/ksa"
)

// PatchOp is one JSON Patch (RFC 6902) operation. The expander only emits
// "add" with a string value.
type PatchOp struct {
	// Op is the operation, "add".
	Op string `json:"op"`
	// Path is the JSON pointer of the field set.
	Path string `json:"path"`
	// Value is the field's new value.
	Value string `json:"value"`
}

// Patch is a JSON Patch; it marshals to the array the admission response
// carries.
type Patch []PatchOp

// HostnamePath is the JSON pointer of the pod's hostname.
const HostnamePath = "/spec/hostname"

// ExpanderConfig configures an [Expander]. The zero value is not usable:
// Source is required.
type ExpanderConfig struct {
	// Source looks GMSACredentialSpec contents up. Required.
	Source Source
	// RandomHostname, when true, gives every pod that names a
	// GMSACredentialSpec and has no spec.hostname a random 15-character
	// hostname, as windows-gmsa's RANDOM_HOSTNAME does (a workaround for
	// several containers sharing one gMSA). Default false: hostnames are
	// never touched.
	RandomHostname bool
	// Rand is the randomness for hostnames. Default crypto/rand.Reader.
	Rand io.Reader
}

// Expander is the mutating half of the webhook (KEP-689's GMSAExpander): it
// inlines the contents of each named GMSACredentialSpec. Safe for
// concurrent use.
type Expander struct {
	source         Source
	canonical      bool
	randomHostname bool
	rand           io.Reader
}

// NewExpander checks cfg and returns an expander; errors are a
// *ksa.ConfigError.
func NewExpander(cfg ExpanderConfig) (*Expander, error) {
	if cfg.Source == nil {
		return nil, &ksa.ConfigError{Field: "credspec.ExpanderConfig.Source", Reason: "is required"}
	}
	r := cfg.Rand
	if r == nil {
		r = rand.Reader
	}
	_, canonical := cfg.Source.(canonicalSource)
	return &Expander{source: cfg.Source, canonical: canonical, randomHostname: cfg.RandomHostname, rand: r}, nil
}

// ExpandCreate returns the patch for a pod being created: for every level
// (pod, containers, init containers, ephemeral containers) that names a
// GMSACredentialSpec (gmsaCredentialSpecName set, even to "") and has no
// gmsaCredentialSpec, an "add" of the object's [Canonical] contents at
// [Level.ContentsPath]. Contents already present are left for the
// [Validator] to compare. With RandomHostname, an "add" of a random
// hostname follows when any level names an object and the pod has no
// hostname. The patch is nil when there is nothing to change.
//
// A lookup failure denies the whole pod (*[Denial]): 404 for a missing
// object, 417 for one without credspec, 500 otherwise. No authorization is
// checked here.
func (e *Expander) ExpandCreate(ctx context.Context, pod *corev1.Pod) (Patch, error) {
	if err := checkPods(pod); err != nil {
		return nil, err
	}
	var (
		patch   Patch
		hasGMSA bool
		cache   contentsCache
	)
	err := walkLevels(pod, func(l Level, o *corev1.WindowsSecurityContextOptions) error {
		if o == nil || o.GMSACredentialSpecName == nil {
			return nil
		}
		hasGMSA = true
		if o.GMSACredentialSpec != nil {
			return nil
		}
		c, err := cache.get(ctx, e.source, e.canonical, l, *o.GMSACredentialSpecName)
		if err != nil {
			return err
		}
		patch = append(patch, PatchOp{Op: "add", Path: l.ContentsPath(), Value: c})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if hasGMSA && e.randomHostname && pod.Spec.Hostname == "" {
		h, err := randomHostname(e.rand)
		if err != nil {
			return nil, deny(http.StatusInternalServerError, ErrLookupFailed, nil, "", err, "unable to generate a random hostname: %v", err)
		}
		patch = append(patch, PatchOp{Op: "add", Path: HostnamePath, Value: h})
	}
	return patch, nil
}

// ExpandUpdate returns the patch for a pod update: only ephemeral
// containers absent from old (added through the pods/ephemeralcontainers
// subresource) are expanded, as in ExpandCreate. For every other update it
// returns nil, as windows-gmsa does.
func (e *Expander) ExpandUpdate(ctx context.Context, pod, old *corev1.Pod) (Patch, error) {
	if err := checkPods(pod, old); err != nil {
		return nil, err
	}
	var (
		patch Patch
		cache contentsCache
	)
	for i := range pod.Spec.EphemeralContainers {
		c := &pod.Spec.EphemeralContainers[i]
		if _, existed := findOptions(old, LevelEphemeralContainer, c.Name); existed {
			continue
		}
		o := windowsOptions(c.SecurityContext)
		if o == nil || o.GMSACredentialSpecName == nil || o.GMSACredentialSpec != nil {
			continue
		}
		l := Level{Kind: LevelEphemeralContainer, Name: c.Name, Index: i}
		v, err := cache.get(ctx, e.source, e.canonical, l, *o.GMSACredentialSpecName)
		if err != nil {
			return nil, err
		}
		patch = append(patch, PatchOp{Op: "add", Path: l.ContentsPath(), Value: v})
	}
	return patch, nil
}

// checkPods refuses nil pods (400).
func checkPods(pods ...*corev1.Pod) error {
	for _, p := range pods {
		if p == nil {
			return deny(http.StatusBadRequest, ErrBadRequest, nil, "", nil, "no pod object")
		}
	}
	return nil
}

// randomHostname returns what windows-gmsa uses: the first 15 characters of
// a random (version 4) UUID, e.g. "1b4e28ba-2fa1-4".
func randomHostname(r io.Reader) (string, error) {
	var b [6]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", err
	}
	var buf [16]byte
	hex.Encode(buf[:8], b[:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], b[4:6])
	buf[13] = '-'
	buf[14] = '4' // the UUID version digit
	return string(buf[:15]), nil
}

// contentsCache fetches each name once per review.
type contentsCache struct {
	names, values []string
}

func (c *contentsCache) get(ctx context.Context, src Source, canonical bool, l Level, name string) (string, error) {
	for i, n := range c.names {
		if n == name {
			return c.values[i], nil
		}
	}
	v, err := fetchContents(ctx, src, canonical, l, name)
	if err != nil {
		return "", err
	}
	c.names = append(c.names, name)
	c.values = append(c.values, v)
	return v, nil
}

// fetchContents reads and renders an object's contents, mapping failures to
// windows-gmsa's codes and messages.
func fetchContents(ctx context.Context, src Source, canonical bool, l Level, name string) (string, error) {
	raw, err := src.Contents(ctx, name)
	if err != nil {
		if isNotFound(err) {
			return "", deny(http.StatusNotFound, ErrNotFound, &l, name, err, "cred spec %s does not exist", name)
		}
		return "", deny(http.StatusInternalServerError, ErrLookupFailed, &l, name, err, "unable to retrieve the contents of cred spec %s: %v", name, err)
	}
	if !canonical {
		if raw != "" && raw != `""` {
			raw, err = Canonical(raw)
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return "", deny(http.StatusUnprocessableEntity, ErrTooLarge, &l, name, err, "cred spec %s is too large to inline: %v", name, err)
			}
			return "", deny(http.StatusInternalServerError, ErrLookupFailed, &l, name, err, "unable to marshall cred spec %s into a JSON: %v", name, err)
		}
	}
	if raw == "" || raw == `""` || raw == "null" {
		return "", deny(http.StatusExpectationFailed, ErrNoContents, &l, name, nil, "cred spec %s does not have a %s key", name, ContentsField)
	}
	return raw, nil
}
