package kubeapi

import (
	"fmt"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/tokens"
)

// The group and version of the webhook configurations a token may be bound
// to (named here rather than imported: importers of kubeapi do not link
// that API group for it).
const (
	admissionRegistrationGroup   = "admissionregistration.k8s.io"
	admissionRegistrationVersion = "v1"
)

// RequestFromSpec builds a tokens.Request from a TokenRequest spec. The
// bound object's UID must be set in the reference (kube-apiserver fills it
// from the live object; a minter cannot). Kinds are matched as
// kube-apiserver matches them: group "" and exactly Pod, Secret or Node, or
// admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration or
// MutatingWebhookConfiguration (Kubernetes 1.37, alpha), whose spec's
// attestations are carried over. The error is a *tokens.RequestError
// matching tokens.ErrInvalidRequest.
func RequestFromSpec(sa ksa.ServiceAccount, spec authenticationv1.TokenRequestSpec) (tokens.Request, error) {
	req := tokens.Request{ServiceAccount: sa, Audiences: slices.Clone(spec.Audiences)}
	if spec.ExpirationSeconds != nil {
		if *spec.ExpirationSeconds == 0 {
			return tokens.Request{}, &tokens.RequestError{Field: "spec.expirationSeconds", Reason: "may not specify a duration less than 10 minutes"}
		}
		req.ExpirationSeconds = *spec.ExpirationSeconds
	}
	if ref := spec.BoundObjectRef; ref != nil {
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		kind := tokens.BoundKind(gvk.Kind)
		core := gvk.Group == "" && (kind == tokens.BoundPod || kind == tokens.BoundSecret || kind == tokens.BoundNode)
		webhook := gvk.Group == admissionRegistrationGroup && gvk.Version == admissionRegistrationVersion && kind.IsWebhook()
		if !core && !webhook {
			return tokens.Request{}, &tokens.RequestError{Field: "spec.boundObjectRef", Reason: fmt.Sprintf("cannot bind token to object of type %s", gvk.String())}
		}
		req.BoundObject = &tokens.BoundObject{Kind: kind, Name: ref.Name, UID: string(ref.UID)}
	}
	if len(spec.Attestations) > 0 {
		req.Attestations = make(map[string][]string, len(spec.Attestations))
		for key, vals := range spec.Attestations {
			req.Attestations[key] = slices.Clone([]string(vals))
		}
	}
	return req, nil
}
