package credspec

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ksa-go/ksa"
)

// Mutate answers an admission request sent to /mutate: CREATE through
// [Expander.ExpandCreate], UPDATE through [Expander.ExpandUpdate]. It is
// what ServeHTTP calls, exposed for frameworks that decode reviews
// themselves. Without an Expander every request is denied (500).
func (h *Handler) Mutate(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp, _ := h.mutate(ctx, req)
	return resp
}

// Validate answers an admission request sent to /validate: CREATE through
// [Validator.ValidateCreate], UPDATE through [Validator.ValidateUpdate],
// with the request's user as requester. Without a Validator every request
// is denied (500).
func (h *Handler) Validate(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp, _ := h.validate(ctx, req)
	return resp
}

func (h *Handler) mutate(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if h.expander == nil {
		return deniedErr(req.UID, deny(http.StatusInternalServerError, ksa.ErrInvalidConfig, nil, "", nil, "this webhook does not mutate"))
	}
	pod, old, d := decodePods(req)
	if d != nil {
		return deniedErr(req.UID, d)
	}
	var (
		patch Patch
		err   error
	)
	if req.Operation == admissionv1.Create {
		patch, err = h.expander.ExpandCreate(ctx, pod)
	} else {
		patch, err = h.expander.ExpandUpdate(ctx, pod, old)
	}
	if err != nil {
		return deniedErr(req.UID, err)
	}
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if len(patch) > 0 {
		b, err := json.Marshal(patch)
		if err != nil {
			return deniedErr(req.UID, deny(http.StatusInternalServerError, ErrLookupFailed, nil, "", err, "unable to marshall patch JSON %v: %v", patch, err))
		}
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = b, &pt
	}
	return resp, nil
}

func (h *Handler) validate(ctx context.Context, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if h.validator == nil {
		return deniedErr(req.UID, deny(http.StatusInternalServerError, ksa.ErrInvalidConfig, nil, "", nil, "this webhook does not validate"))
	}
	pod, old, d := decodePods(req)
	if d != nil {
		return deniedErr(req.UID, d)
	}
	requester := requestUser(req)
	var err error
	if req.Operation == admissionv1.Create {
		err = h.validator.ValidateCreate(ctx, req.Namespace, pod, requester)
	} else {
		err = h.validator.ValidateUpdate(ctx, req.Namespace, pod, old, requester)
	}
	if err != nil {
		return deniedErr(req.UID, err)
	}
	return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}, nil
}

// decodePods checks the kind and operation and decodes the pod (and, for
// UPDATE, the old pod), in windows-gmsa's order.
func decodePods(req *admissionv1.AdmissionRequest) (pod, old *corev1.Pod, d *Denial) {
	if req.Kind.Kind != "Pod" {
		return nil, nil, deny(http.StatusBadRequest, ErrBadRequest, nil, "", nil, "expected a Pod object, got a %v", req.Kind.Kind)
	}
	if req.Kind.Group != "" || req.Kind.Version != "v1" {
		return nil, nil, deny(http.StatusBadRequest, ErrBadRequest, nil, "", nil, "expected a Pod object, got a %v", req.Kind)
	}
	pod = new(corev1.Pod)
	if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
		return nil, nil, deny(http.StatusBadRequest, ErrBadRequest, nil, "", err, "unable to unmarshall pod JSON object: %v", err)
	}
	switch req.Operation {
	case admissionv1.Create:
		return pod, nil, nil
	case admissionv1.Update:
		old = new(corev1.Pod)
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return nil, nil, deny(http.StatusBadRequest, ErrBadRequest, nil, "", err, "unable to unmarshall pod JSON object: %v", err)
		}
		return pod, old, nil
	}
	// windows-gmsa's message, typo included.
	return nil, nil, deny(http.StatusBadRequest, ErrBadRequest, nil, "", nil, "unpexpected operation %s", req.Operation)
}

func requestUser(req *admissionv1.AdmissionRequest) *ksa.UserInfo {
	u := req.UserInfo
	if u.Username == "" && u.UID == "" && len(u.Groups) == 0 {
		return nil
	}
	info := &ksa.UserInfo{Username: u.Username, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		info.Extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			info.Extra[k] = []string(v)
		}
	}
	return info
}

func deniedErr(uid types.UID, err error) (*admissionv1.AdmissionResponse, error) {
	return denied(uid, err), err
}

// denied turns an error into a denied response; errors that are not a
// *Denial (none are expected) become 500s.
func denied(uid types.UID, err error) *admissionv1.AdmissionResponse {
	var d *Denial
	if !errors.As(err, &d) {
		d = deny(http.StatusInternalServerError, ErrLookupFailed, nil, "", err, "%v", err)
	}
	st := d.Status()
	return &admissionv1.AdmissionResponse{UID: uid, Allowed: false, Result: &st}
}
