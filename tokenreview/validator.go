package tokenreview

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/tokens"
)

// Mode says what a [Validator] checks locally and what it asks
// kube-apiserver.
type Mode int

const (
	// LocalThenReview validates the token locally first (signature, issuer,
	// audiences, times: a forged or expired token never reaches the
	// apiserver), then asks the apiserver whether it is still live, and
	// accepts only when the answer agrees with the token: same service
	// account and UID, same pod UID, audiences among those asked. It is the
	// zero Mode.
	LocalThenReview Mode = iota
	// ReviewOnly asks the apiserver alone, as Vault's Kubernetes auth and
	// SPIRE's k8s_psat do: for relying parties that hold no keys. The
	// answer's audiences must be among those asked and its user a service
	// account; every token reaches the apiserver.
	ReviewOnly
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case LocalThenReview:
		return "LocalThenReview"
	case ReviewOnly:
		return "ReviewOnly"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// LocalFunc validates a token for audiences without asking the apiserver:
// the method value tokens.Validator.ValidateFor or oidc.Verifier.VerifyFor.
type LocalFunc func(ctx context.Context, token string, audiences []string) (*tokens.Result, error)

// ValidatorConfig configures a [Validator]. Reviewer and Audiences are
// required, and Local in LocalThenReview mode.
type ValidatorConfig struct {
	// Mode is LocalThenReview (the zero value) or ReviewOnly. Validation
	// without any review is the local validator itself.
	Mode Mode
	// Local validates the token before the review (LocalThenReview); it
	// must be nil in ReviewOnly mode. Its own object checks are redundant
	// with the review: a validator built with SkipObjectCheck is the
	// usual choice.
	Local LocalFunc
	// Reviewer sends the TokenReview. Required.
	Reviewer Reviewer
	// Audiences are the audiences a token must name one of, sent as the
	// review's spec.audiences. Required, none empty: a review without
	// audiences would accept tokens meant for kube-apiserver itself.
	Audiences []string
	// MaxTokenBytes bounds the tokens sent to the apiserver in ReviewOnly
	// mode (in LocalThenReview the local validator bounds them); zero means
	// tokens.DefaultMaxTokenBytes.
	MaxTokenBytes int
}

// Validator validates service-account tokens with kube-apiserver's
// TokenReview, after or instead of local validation. It is safe for
// concurrent use if its Local and Reviewer are.
type Validator struct {
	mode      Mode
	local     LocalFunc
	reviewer  Reviewer
	audiences []string
	maxBytes  int
}

// NewValidator checks the config and returns a Validator; a config it
// refuses is a *ksa.ConfigError.
func NewValidator(cfg ValidatorConfig) (*Validator, error) {
	config := func(field, reason string) (*Validator, error) {
		return nil, configError("ValidatorConfig."+field, reason)
	}
	switch {
	case cfg.Mode != LocalThenReview && cfg.Mode != ReviewOnly:
		return config("Mode", fmt.Sprintf("is %s, not LocalThenReview or ReviewOnly", cfg.Mode))
	case cfg.Mode == LocalThenReview && cfg.Local == nil:
		return config("Local", "is required in LocalThenReview mode")
	case cfg.Mode == ReviewOnly && cfg.Local != nil:
		return config("Local", "is set in ReviewOnly mode, which never validates locally")
	case cfg.Reviewer == nil:
		return config("Reviewer", "is required")
	case len(cfg.Audiences) == 0:
		return config("Audiences", "is required: a review without audiences accepts tokens meant for the apiserver")
	case slices.Contains(cfg.Audiences, ""):
		return config("Audiences", "holds an empty string, which no token can name")
	case cfg.MaxTokenBytes < 0:
		return config("MaxTokenBytes", "is negative")
	}
	v := &Validator{mode: cfg.Mode, local: cfg.Local, reviewer: cfg.Reviewer,
		audiences: slices.Clone(cfg.Audiences), maxBytes: cfg.MaxTokenBytes}
	if v.maxBytes == 0 {
		v.maxBytes = tokens.DefaultMaxTokenBytes
	}
	return v, nil
}

// Validate validates a token for the configured audiences.
func (v *Validator) Validate(ctx context.Context, token string) (*tokens.Result, error) {
	return v.ValidateFor(ctx, token, nil)
}

// ValidateFor validates a token for the given audiences (an empty list
// means the configured ones). In LocalThenReview mode the result is the
// local one, confirmed by the review. In ReviewOnly mode it is built from
// the review alone: Identity and Audiences are set, Claims is nil and
// Issuer, KeyID and Algorithm are empty, since no claim was read.
func (v *Validator) ValidateFor(ctx context.Context, token string, audiences []string) (*tokens.Result, error) {
	if len(audiences) == 0 {
		audiences = v.audiences
	}
	var local *tokens.Result
	if v.mode == LocalThenReview {
		res, err := v.local(ctx, token, audiences)
		if err != nil {
			return nil, err
		}
		if res == nil {
			return nil, reviewFailed(errors.New("local validation returned no result"))
		}
		local = res
	} else if len(token) > v.maxBytes {
		return nil, errs.Wrap(prefix, tokens.ErrTooLarge, fmt.Sprintf("token of %d bytes is over the %d-byte limit", len(token), v.maxBytes), nil)
	}
	st, err := v.reviewer.Review(ctx, Request{Token: token, Audiences: slices.Clone(audiences)})
	if err != nil {
		return nil, reviewFailed(err)
	}
	if st == nil {
		return nil, reviewFailed(errors.New("the reviewer returned no status"))
	}
	if !st.Authenticated {
		return nil, refused(st.Error)
	}
	id, err := IdentityOf(st.User)
	if err != nil {
		return nil, mismatch("user.username", "a service account", st.User.Username, err)
	}
	if err := checkAudiences(st.Audiences, audiences); err != nil {
		return nil, err
	}
	if local == nil {
		return &tokens.Result{Identity: id, Audiences: slices.Clone(st.Audiences)}, nil
	}
	if err := agree(local.Identity, id); err != nil {
		return nil, err
	}
	return local, nil
}

// Audiences returns the configured audiences.
func (v *Validator) Audiences() []string { return slices.Clone(v.audiences) }

// checkAudiences requires the review's audiences to be a non-empty subset
// of those asked.
func checkAudiences(got, asked []string) error {
	if len(got) == 0 {
		return mismatch("audiences", fmt.Sprint(asked), "[]", nil)
	}
	for _, a := range got {
		if !slices.Contains(asked, a) {
			return mismatch("audiences", fmt.Sprint(asked), fmt.Sprint(got), nil)
		}
	}
	return nil
}

// agree requires the review's identity to be the token's: service
// account, its UID, and the pod's name and UID when the token names a pod.
func agree(local, review ksa.Identity) error {
	type field struct{ name, want, got string }
	fields := []field{
		{"user.username", local.ServiceAccount.Username(), review.ServiceAccount.Username()},
		{"user.uid", local.ServiceAccount.UID, review.ServiceAccount.UID},
		{"pod name", local.Pod.Name, review.Pod.Name},
		{"pod UID", local.Pod.UID, review.Pod.UID},
	}
	if local.CredentialID != "" && review.CredentialID != "" {
		fields = append(fields, field{"credential ID", local.CredentialID, review.CredentialID})
	}
	for _, f := range fields {
		if f.want != f.got {
			return mismatch(f.name, fmt.Sprintf("%q", f.want), f.got, nil)
		}
	}
	return nil
}
