package credspec_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credspec"
)

const reformattedContents = `{"All in all you're just another":      {"the":"wall","brick":   "in"},"We don't need no":["education", "thought control","dark sarcasm in the classroom"]}`

// failingSource and failingAuthorizer stand for windows-gmsa's nil client:
// any call fails the test.
func failingSource(t *testing.T) credspec.Source {
	return credspec.SourceFunc(func(_ context.Context, name string) (string, error) {
		t.Errorf("unexpected lookup of %q", name)
		return "", errors.New("unexpected lookup")
	})
}

func failingAuthorizer(t *testing.T) credspec.Authorizer {
	return credspec.AuthorizerFunc(func(_ context.Context, r credspec.UseRequest) (credspec.Decision, error) {
		t.Errorf("unexpected authorization of %+v", r)
		return credspec.Decision{}, errors.New("unexpected authorization")
	})
}

// emptyOptionPods are pods whose pod and container windowsOptions are {} or
// nil.
func emptyOptionPods() map[string]*corev1.Pod {
	mk := func(podOpts, cOpts *corev1.WindowsSecurityContextOptions) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: dummyPodName, Namespace: dummyNamespace},
			Spec: corev1.PodSpec{
				ServiceAccountName: dummyServiceAccountName,
				SecurityContext:    &corev1.PodSecurityContext{WindowsOptions: podOpts},
				Containers:         []corev1.Container{{Name: dummyContainerName, SecurityContext: &corev1.SecurityContext{WindowsOptions: cOpts}}},
				InitContainers:     []corev1.Container{{Name: "init", SecurityContext: &corev1.SecurityContext{WindowsOptions: cOpts}}},
			},
		}
	}
	return map[string]*corev1.Pod{
		"empty": mk(&corev1.WindowsSecurityContextOptions{}, &corev1.WindowsSecurityContextOptions{}),
		"nil":   mk(nil, nil),
	}
}

// TestConformanceValidateCreate holds ValidateCreate to windows-gmsa's
// TestValidateCreateRequest, and to a create whose contents the mutating
// webhook did not inline (only the review is checked); harness cases run
// for 0-5 extra containers x pod, container, init container and ephemeral
// container.
func TestConformanceValidateCreate(t *testing.T) {
	t.Run("08_empty_or_nil_options_need_no_client", func(t *testing.T) {
		for name, pod := range emptyOptionPods() {
			v := newValidator(t, failingSource(t), failingAuthorizer(t))
			assert.NoError(t, v.ValidateCreate(t.Context(), dummyNamespace, pod, nil), name)
		}
	})

	tests := []struct {
		name     string
		set      func(o *corev1.WindowsSecurityContextOptions)
		decide   func(credspec.UseRequest) (credspec.Decision, error)
		lookup   func(name string) (string, error)
		wantCode int32
		wantErr  error
		wantMsg  func(l credspec.Level) string
		check    func(t *testing.T, f *fixture, src *fakeSource, authz *fakeAuthorizer, err error)
	}{
		{
			name: "09_identical_contents_allowed",
			set: func(o *corev1.WindowsSecurityContextOptions) {
				o.GMSACredentialSpecName, o.GMSACredentialSpec = new(dummyCredSpecName), new(dummyCredSpecContents)
			},
		},
		{
			name: "10_reformatted_contents_allowed",
			set: func(o *corev1.WindowsSecurityContextOptions) {
				o.GMSACredentialSpecName, o.GMSACredentialSpec = new(dummyCredSpecName), new(reformattedContents)
			},
		},
		{
			name: "11_different_contents_denied_422",
			set: func(o *corev1.WindowsSecurityContextOptions) {
				o.GMSACredentialSpecName = new(dummyCredSpecName)
				o.GMSACredentialSpec = new(`{"We don't need no": ["money"], "All in all you're just another": {"brick": "in", "the": "wall"}}`)
			},
			wantCode: http.StatusUnprocessableEntity, wantErr: credspec.ErrContentsMismatch,
			wantMsg: func(l credspec.Level) string {
				return fmt.Sprintf("the GMSA cred spec contents for %s does not match the contents of GMSA resource %q", l, dummyCredSpecName)
			},
		},
		{
			name: "12_non_json_contents_denied_422",
			set: func(o *corev1.WindowsSecurityContextOptions) {
				o.GMSACredentialSpecName, o.GMSACredentialSpec = new(dummyCredSpecName), new("i ain't no JSON object")
			},
			wantCode: http.StatusUnprocessableEntity, wantErr: credspec.ErrContentsMismatch,
			wantMsg: func(l credspec.Level) string {
				return fmt.Sprintf("the GMSA cred spec contents for %s does not match the contents of GMSA resource %q: unable to parse \"i ain't no JSON object\" as a JSON object: ", l, dummyCredSpecName)
			},
			check: func(t *testing.T, _ *fixture, _ *fakeSource, _ *fakeAuthorizer, err error) {
				var d *credspec.Denial
				require.ErrorAs(t, err, &d)
				require.ErrorIs(t, d.Err, credspec.ErrInvalidSpec, "the denial wraps the parser's error")
				assert.NotContains(t, d.Err.Error(), "unable to parse CRD", "the pod's contents are named, not the object's")
				assert.ErrorIs(t, err, credspec.ErrInvalidSpec)
			},
		},
		{
			name:     "13_contents_without_name_denied_422",
			set:      func(o *corev1.WindowsSecurityContextOptions) { o.GMSACredentialSpec = new(dummyCredSpecContents) },
			wantCode: http.StatusUnprocessableEntity, wantErr: credspec.ErrNameMissing,
			wantMsg: func(l credspec.Level) string {
				return fmt.Sprintf("%s has a GMSA cred spec set, but does not define the name of the corresponding resource", l)
			},
		},
		{
			name: "14_sar_denied_is_403",
			set: func(o *corev1.WindowsSecurityContextOptions) {
				o.GMSACredentialSpecName, o.GMSACredentialSpec = new(dummyCredSpecName), new(dummyCredSpecContents)
			},
			decide:   denyName(dummyCredSpecName, "dummy reason"),
			wantCode: http.StatusForbidden, wantErr: credspec.ErrNotAuthorized,
			wantMsg: func(credspec.Level) string {
				return "service account \"dummy-service-account-name\" is not authorized to `use` GMSA cred spec \"dummy-cred-spec-name\", reason: \"dummy reason\""
			},
			check: func(t *testing.T, _ *fixture, _ *fakeSource, authz *fakeAuthorizer, _ error) {
				sa := ksa.ServiceAccount{Namespace: dummyNamespace, Name: dummyServiceAccountName}
				want := credspec.UseRequest{User: ksa.UserInfo{Username: sa.Username(), Groups: sa.Groups()}, Namespace: dummyNamespace, Name: dummyCredSpecName}
				assert.Contains(t, authz.calls, want)
			},
		},
		{
			name: "15_lookup_404_is_404",
			set: func(o *corev1.WindowsSecurityContextOptions) {
				o.GMSACredentialSpecName, o.GMSACredentialSpec = new(dummyCredSpecName), new(dummyCredSpecContents)
			},
			lookup: func(name string) (string, error) {
				if name == dummyCredSpecName {
					return "", notFound("dummy error")
				}
				return contentsOf(name), nil
			},
			wantCode: http.StatusNotFound, wantErr: credspec.ErrNotFound,
			wantMsg: func(credspec.Level) string { return "cred spec dummy-cred-spec-name does not exist" },
			check: func(t *testing.T, _ *fixture, _ *fakeSource, _ *fakeAuthorizer, err error) {
				var cause *apierrors.StatusError
				require.ErrorAs(t, err, &cause)
				assert.Equal(t, "dummy error", cause.ErrStatus.Message)
				assert.True(t, apierrors.IsNotFound(err))
			},
		},
		{
			name: "57_name_without_contents_only_authorizes",
			set:  func(o *corev1.WindowsSecurityContextOptions) { o.GMSACredentialSpecName = new(dummyCredSpecName) },
			check: func(t *testing.T, _ *fixture, src *fakeSource, authz *fakeAuthorizer, _ error) {
				assert.NotContains(t, src.calls, dummyCredSpecName)
				var names []string
				for _, c := range authz.calls {
					names = append(names, c.Name)
				}
				assert.Contains(t, names, dummyCredSpecName)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachFixture(t, extrasNameAndContents, func(t *testing.T, f *fixture) {
				tt.set(f.target)
				src := &fakeSource{override: tt.lookup}
				authz := &fakeAuthorizer{decide: tt.decide}
				err := newValidator(t, src, authz).ValidateCreate(t.Context(), dummyNamespace, f.pod, nil)
				if tt.wantCode == 0 {
					require.NoError(t, err)
				} else {
					d := requireDenial(t, err, tt.wantCode, tt.wantErr, tt.wantMsg(f.level))
					require.NotNil(t, d.Level)
					assert.Equal(t, f.level, *d.Level)
				}
				if tt.check != nil {
					tt.check(t, f, src, authz, err)
				}
			})
		})
	}
}

// TestConformanceMutateCreate holds ExpandCreate to windows-gmsa's
// TestMutateCreateRequest.
func TestConformanceMutateCreate(t *testing.T) {
	t.Run("16_empty_or_nil_options_no_patch", func(t *testing.T) {
		for name, pod := range emptyOptionPods() {
			for _, random := range []bool{false, true} {
				e := newExpander(t, credspec.ExpanderConfig{Source: failingSource(t), RandomHostname: random})
				patch, err := e.ExpandCreate(t.Context(), pod)
				require.NoError(t, err, name)
				assert.Nil(t, patch, name)
			}
		}
	})

	bothLevelsSet := func(hostname string) *corev1.Pod {
		opts := func() *corev1.WindowsSecurityContextOptions {
			return &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new(dummyCredSpecName), GMSACredentialSpec: new(dummyCredSpecContents)}
		}
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: dummyPodName, Namespace: dummyNamespace},
			Spec: corev1.PodSpec{
				Hostname:        hostname,
				SecurityContext: &corev1.PodSecurityContext{WindowsOptions: opts()},
				Containers:      []corev1.Container{{Name: dummyContainerName, SecurityContext: &corev1.SecurityContext{WindowsOptions: opts()}}},
			},
		}
	}
	t.Run("17_random_hostname_only_patch", func(t *testing.T) {
		e := newExpander(t, credspec.ExpanderConfig{Source: failingSource(t), RandomHostname: true})
		patch, err := e.ExpandCreate(t.Context(), bothLevelsSet(""))
		require.NoError(t, err)
		require.Len(t, patch, 1)
		assert.Equal(t, "add", patch[0].Op)
		assert.Equal(t, credspec.HostnamePath, patch[0].Path)
		assert.Len(t, patch[0].Value, 15)
	})
	t.Run("18_user_hostname_kept", func(t *testing.T) {
		e := newExpander(t, credspec.ExpanderConfig{Source: failingSource(t), RandomHostname: true})
		patch, err := e.ExpandCreate(t.Context(), bothLevelsSet("my-host"))
		require.NoError(t, err)
		assert.Nil(t, patch)
	})

	tests := []struct {
		name     string
		set      func(o *corev1.WindowsSecurityContextOptions)
		random   bool
		lookup   func(name string) (string, error)
		wantCode int32
		wantErr  error
		wantMsg  string
		// targetPatched says whether the target level gets an op.
		targetPatched bool
	}{
		{
			name:          "19_names_expanded_with_random_hostname",
			set:           func(o *corev1.WindowsSecurityContextOptions) { o.GMSACredentialSpecName = new(dummyCredSpecName) },
			random:        true,
			targetPatched: true,
		},
		{
			name: "20_preset_contents_left_alone",
			set: func(o *corev1.WindowsSecurityContextOptions) {
				o.GMSACredentialSpecName, o.GMSACredentialSpec = new(dummyCredSpecName), new(`{"pre-set GMSA": "cred contents"}`)
			},
		},
		{
			name: "21_lookup_404_is_404",
			set:  func(o *corev1.WindowsSecurityContextOptions) { o.GMSACredentialSpecName = new(dummyCredSpecName) },
			lookup: func(name string) (string, error) {
				if name == dummyCredSpecName {
					return "", notFound("dummy error")
				}
				return contentsOf(name), nil
			},
			wantCode: http.StatusNotFound, wantErr: credspec.ErrNotFound, wantMsg: "cred spec dummy-cred-spec-name does not exist",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachFixture(t, extrasNameOnly, func(t *testing.T, f *fixture) {
				tt.set(f.target)
				e := newExpander(t, credspec.ExpanderConfig{Source: &fakeSource{override: tt.lookup}, RandomHostname: tt.random})
				patch, err := e.ExpandCreate(t.Context(), f.pod)
				if tt.wantCode != 0 {
					requireDenial(t, err, tt.wantCode, tt.wantErr, tt.wantMsg)
					assert.Nil(t, patch)
					return
				}
				require.NoError(t, err)
				want := map[string]string{}
				for _, l := range f.extras {
					want[l.ContentsPath()] = canonical(t, contentsOf(l.Name+"-cred-spec"))
				}
				if tt.targetPatched {
					want[f.level.ContentsPath()] = canonical(t, dummyCredSpecContents)
				}
				got := map[string]string{}
				var hostnames int
				for _, op := range patch {
					assert.Equal(t, "add", op.Op)
					if op.Path == credspec.HostnamePath {
						hostnames++
						assert.Len(t, op.Value, 15)
						continue
					}
					got[op.Path] = op.Value
				}
				assert.Equal(t, want, got)
				if tt.random {
					assert.Equal(t, 1, hostnames)
					assert.Len(t, patch, len(want)+1)
				} else {
					assert.Zero(t, hostnames)
					if len(want) == 0 {
						assert.Nil(t, patch)
					}
				}
			})
		})
	}
}

// TestConformanceValidateUpdate holds ValidateUpdate to windows-gmsa's
// TestValidateUpdateRequest.
func TestConformanceValidateUpdate(t *testing.T) {
	t.Run("22_empty_or_nil_options_allowed", func(t *testing.T) {
		for name, pod := range emptyOptionPods() {
			v := newValidator(t, failingSource(t), failingAuthorizer(t))
			assert.NoError(t, v.ValidateUpdate(t.Context(), dummyNamespace, pod, pod.DeepCopy(), nil), name)
		}
	})

	tests := []struct {
		name    string
		set     func(o *corev1.WindowsSecurityContextOptions)
		wantMsg string // "" means allowed; else the %s of "GMSA %s modified"
	}{
		{name: "23_identical_settings_allowed", set: func(*corev1.WindowsSecurityContextOptions) {}},
		{name: "24_name_changed_denied_403", set: func(o *corev1.WindowsSecurityContextOptions) {
			o.GMSACredentialSpecName = new("new-cred-spec-name")
		}, wantMsg: "name"},
		{name: "25_contents_changed_denied_403", set: func(o *corev1.WindowsSecurityContextOptions) {
			o.GMSACredentialSpec = new("new-cred-spec-contents")
		}, wantMsg: "contents"},
		{name: "26_both_changed_denied_403", set: func(o *corev1.WindowsSecurityContextOptions) {
			o.GMSACredentialSpecName, o.GMSACredentialSpec = new("new-cred-spec-name"), new("new-cred-spec-contents")
		}, wantMsg: "name and contents"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachFixture(t, extrasNameAndContents, func(t *testing.T, f *fixture) {
				f.target.GMSACredentialSpecName, f.target.GMSACredentialSpec = new(dummyCredSpecName), new(dummyCredSpecContents)
				old := f.pod.DeepCopy()
				tt.set(f.target)
				v := newValidator(t, failingSource(t), failingAuthorizer(t))
				err := v.ValidateUpdate(t.Context(), dummyNamespace, f.pod, old, nil)
				if tt.wantMsg == "" {
					require.NoError(t, err)
					return
				}
				requireDenial(t, err, http.StatusForbidden, credspec.ErrUpdateForbidden,
					fmt.Sprintf("cannot update an existing pod's GMSA settings (GMSA %s modified on %s)", tt.wantMsg, f.level))
			})
		})
	}

	t.Run("27_string_pointers_compare_by_value", func(t *testing.T) {
		cases := []struct {
			name      string
			old, new  *string
			wantEqual bool
		}{
			{name: "nil_nil", wantEqual: true},
			{name: "foo_nil", old: new("foo")},
			{name: "nil_foo", new: new("foo")},
			{name: "foo_foo", old: new("foo"), new: new("foo"), wantEqual: true},
			{name: "foo_bar", old: new("foo"), new: new("bar")},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				mk := func(contents *string) *corev1.Pod {
					return &corev1.Pod{
						ObjectMeta: metav1.ObjectMeta{Name: dummyPodName},
						Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
							GMSACredentialSpecName: new(dummyCredSpecName), GMSACredentialSpec: contents,
						}}},
					}
				}
				err := newValidator(t, failingSource(t), failingAuthorizer(t)).ValidateUpdate(t.Context(), dummyNamespace, mk(c.new), mk(c.old), nil)
				if c.wantEqual {
					assert.NoError(t, err)
				} else {
					assert.ErrorIs(t, err, credspec.ErrUpdateForbidden)
				}
			})
		}
	})
}
