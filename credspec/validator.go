package credspec

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

// ValidatorConfig configures a [Validator]. The zero value is not usable:
// Source and Authorizer are required.
type ValidatorConfig struct {
	// Source looks GMSACredentialSpec contents up. Required.
	Source Source
	// Authorizer decides `use` access. Required.
	Authorizer Authorizer
	// CheckRequestingUser, when true, also requires the user who sends the
	// request to be allowed to `use` each named object (KEP-689's threat
	// model), not only the pod's service account. Pods created by
	// controllers are requested by the controller's own service account
	// (e.g. system:serviceaccount:kube-system:replicaset-controller),
	// which then needs `use` too. A request whose user is unknown is
	// denied. Default false: only the service account is checked, as
	// windows-gmsa does.
	CheckRequestingUser bool
}

// Validator is the validating half of the webhook (KEP-689's
// GMSAAuthorizer). Safe for concurrent use.
type Validator struct {
	source         Source
	canonical      bool
	authz          Authorizer
	checkRequester bool
}

// NewValidator checks cfg and returns a validator; errors are a
// *ksa.ConfigError.
func NewValidator(cfg ValidatorConfig) (*Validator, error) {
	if cfg.Source == nil {
		return nil, &ksa.ConfigError{Field: "credspec.ValidatorConfig.Source", Reason: "is required"}
	}
	if cfg.Authorizer == nil {
		return nil, &ksa.ConfigError{Field: "credspec.ValidatorConfig.Authorizer", Reason: "is required"}
	}
	_, canonical := cfg.Source.(canonicalSource)
	return &Validator{source: cfg.Source, canonical: canonical, authz: cfg.Authorizer, checkRequester: cfg.CheckRequestingUser}, nil
}

// ValidateCreate checks a pod being created, level by level (pod,
// containers, init containers, ephemeral containers); the first failure is
// returned as a *[Denial] with windows-gmsa's code and message:
//   - a level naming an object: the pod's service account (and, with
//     CheckRequestingUser, requester) must be allowed to `use` it (403);
//     if contents are inlined too they must [Equal] the object's (422; a
//     lookup failure gives its own code). Without contents only access is
//     checked;
//   - a level with contents but no name: 422.
//
// namespace is the admission request's; when empty the pod's is used, and
// a pod with neither is refused (400).
func (v *Validator) ValidateCreate(ctx context.Context, namespace string, pod *corev1.Pod, requester *ksa.UserInfo) error {
	r, err := v.review(namespace, pod, requester)
	if err != nil {
		return err
	}
	return walkLevels(pod, func(l Level, o *corev1.WindowsSecurityContextOptions) error {
		return r.checkLevel(ctx, l, o)
	})
}

// ValidateUpdate checks a pod update: no level may change its
// gmsaCredentialSpecName or gmsaCredentialSpec (403), compared byte for
// byte with the old pod's level of the same kind and name; a level missing
// from old counts as unset. Ephemeral containers absent from old, added
// through the pods/ephemeralcontainers subresource, are checked as in
// ValidateCreate instead.
func (v *Validator) ValidateUpdate(ctx context.Context, namespace string, pod, old *corev1.Pod, requester *ksa.UserInfo) error {
	if err := checkPods(old); err != nil {
		return err
	}
	r, err := v.review(namespace, pod, requester)
	if err != nil {
		return err
	}
	return walkLevels(pod, func(l Level, o *corev1.WindowsSecurityContextOptions) error {
		oldOpts, existed := findOptions(old, l.Kind, l.Name)
		if !existed && l.Kind == LevelEphemeralContainer {
			return r.checkLevel(ctx, l, o)
		}
		nameChanged := !equalStringPointers(gmsaName(o), gmsaName(oldOpts))
		contentsChanged := !equalStringPointers(gmsaContents(o), gmsaContents(oldOpts))
		var what string
		switch {
		case nameChanged && contentsChanged:
			what = "name and contents"
		case nameChanged:
			what = "name"
		case contentsChanged:
			what = "contents"
		default:
			return nil
		}
		return deny(http.StatusForbidden, ErrUpdateForbidden, &l, "", nil,
			"cannot update an existing pod's GMSA settings (GMSA %s modified on %s)", what, l)
	})
}

func gmsaName(o *corev1.WindowsSecurityContextOptions) *string {
	if o == nil {
		return nil
	}
	return o.GMSACredentialSpecName
}

func gmsaContents(o *corev1.WindowsSecurityContextOptions) *string {
	if o == nil {
		return nil
	}
	return o.GMSACredentialSpec
}

func equalStringPointers(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// review holds one admission review's state: who is checked and what was
// already looked up.
type review struct {
	v         *Validator
	namespace string
	sa        ksa.UserInfo
	saName    string
	requester *ksa.UserInfo
	contents  contentsCache
	allowed   []string // names the service account (and requester) may use
}

func (v *Validator) review(namespace string, pod *corev1.Pod, requester *ksa.UserInfo) (*review, error) {
	if err := checkPods(pod); err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = pod.Namespace
	}
	if namespace == "" {
		return nil, deny(http.StatusBadRequest, ErrBadRequest, nil, "", nil, "pod %q has no namespace", pod.Name)
	}
	sa := ksa.ServiceAccount{Namespace: namespace, Name: pod.Spec.ServiceAccountName}
	return &review{
		v:         v,
		namespace: namespace,
		sa:        ksa.UserInfo{Username: sa.Username(), Groups: sa.Groups()},
		saName:    pod.Spec.ServiceAccountName,
		requester: requester,
	}, nil
}

func (r *review) checkLevel(ctx context.Context, l Level, o *corev1.WindowsSecurityContextOptions) error {
	if o == nil {
		return nil
	}
	if o.GMSACredentialSpecName == nil {
		if o.GMSACredentialSpec != nil {
			return deny(http.StatusUnprocessableEntity, ErrNameMissing, &l, "", nil,
				"%s has a GMSA cred spec set, but does not define the name of the corresponding resource", l)
		}
		return nil
	}
	name := *o.GMSACredentialSpecName
	if err := r.authorize(ctx, l, name); err != nil {
		return err
	}
	if o.GMSACredentialSpec == nil {
		return nil
	}
	want, err := r.contents.get(ctx, r.v.source, r.v.canonical, l, name)
	if err != nil {
		return err
	}
	// Text that is not JSON at all gets windows-gmsa's answer from Equal;
	// JSON that parsers may read differently is refused before comparing.
	if json.Valid([]byte(*o.GMSACredentialSpec)) {
		if err := checkUnambiguous(*o.GMSACredentialSpec); err != nil {
			return deny(http.StatusUnprocessableEntity, ErrAmbiguousSpec, &l, name, err,
				"the GMSA cred spec contents for %s cannot be compared with GMSA resource %q: %v", l, name, err)
		}
	}
	eq, err := Equal(*o.GMSACredentialSpec, want)
	if err != nil {
		return deny(http.StatusUnprocessableEntity, ErrContentsMismatch, &l, name, err,
			"the GMSA cred spec contents for %s does not match the contents of GMSA resource %q: %v", l, name, err)
	}
	if !eq {
		return deny(http.StatusUnprocessableEntity, ErrContentsMismatch, &l, name, nil,
			"the GMSA cred spec contents for %s does not match the contents of GMSA resource %q", l, name)
	}
	return nil
}

func (r *review) authorize(ctx context.Context, l Level, name string) error {
	for _, n := range r.allowed {
		if n == name {
			return nil
		}
	}
	d, err := r.v.authz.AuthorizeUse(ctx, UseRequest{User: r.sa, Namespace: r.namespace, Name: name})
	if err != nil {
		d = Decision{Reason: "error when checking authz access: " + errs.Text(err)}
	}
	if !d.Allowed {
		return deny(http.StatusForbidden, ErrNotAuthorized, &l, name, err,
			"service account %q is not authorized to `use` GMSA cred spec %q%s", r.saName, name, reasonSuffix(d.Reason))
	}
	if r.v.checkRequester {
		if r.requester == nil {
			return deny(http.StatusForbidden, ErrNotAuthorized, &l, name, nil,
				"the requesting user is unknown, so its access to GMSA cred spec %q cannot be checked", name)
		}
		d, err := r.v.authz.AuthorizeUse(ctx, UseRequest{User: *r.requester, Namespace: r.namespace, Name: name})
		if err != nil {
			d = Decision{Reason: "error when checking authz access: " + errs.Text(err)}
		}
		if !d.Allowed {
			return deny(http.StatusForbidden, ErrNotAuthorized, &l, name, err,
				"user %q is not authorized to `use` GMSA cred spec %q%s", r.requester.Username, name, reasonSuffix(d.Reason))
		}
	}
	r.allowed = append(r.allowed, name)
	return nil
}

func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return fmt.Sprintf(", reason: %q", reason)
}
