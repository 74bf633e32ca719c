package credspec

import (
	corev1 "k8s.io/api/core/v1"
)

// Annotations of the alpha API (Kubernetes 1.14, KEP-689), dropped at beta.
// Current kubelets ignore them; [EffectiveSpecsAlpha] applies the alpha
// kubelet's rule to them.
const (
	// PodNameAnnotation names the GMSACredentialSpec for the whole pod.
	PodNameAnnotation = "pod.alpha.windows.kubernetes.io/gmsa-credential-spec-name"
	// PodContentsAnnotation holds the pod-wide credential spec JSON.
	PodContentsAnnotation = "pod.alpha.windows.kubernetes.io/gmsa-credential-spec"
	// ContainerNameAnnotationSuffix follows a container's name to form its
	// name annotation; see [ContainerNameAnnotation].
	ContainerNameAnnotationSuffix = ".container.alpha.windows.kubernetes.io/gmsa-credential-spec-name"
	// ContainerContentsAnnotationSuffix follows a container's name to form
	// its contents annotation; see [ContainerContentsAnnotation].
	ContainerContentsAnnotationSuffix = ".container.alpha.windows.kubernetes.io/gmsa-credential-spec"
	// RuntimeAnnotation is the container-config annotation the alpha
	// kubelet passed the effective spec to the runtime in.
	RuntimeAnnotation = "container.alpha.windows.kubernetes.io/gmsa-credential-spec"
)

// ContainerNameAnnotation returns <container>.container.alpha.windows.kubernetes.io/gmsa-credential-spec-name.
func ContainerNameAnnotation(container string) string {
	return container + ContainerNameAnnotationSuffix
}

// ContainerContentsAnnotation returns <container>.container.alpha.windows.kubernetes.io/gmsa-credential-spec.
func ContainerContentsAnnotation(container string) string {
	return container + ContainerContentsAnnotationSuffix
}

// Origin says where a container's effective GMSA settings come from.
type Origin uint8

// Origins of effective GMSA settings.
const (
	// OriginNone: no GMSA settings apply.
	OriginNone Origin = iota
	// OriginPod: inherited from spec.securityContext.windowsOptions.
	OriginPod
	// OriginContainer: the container's own windowsOptions.
	OriginContainer
	// OriginPodAnnotation: the alpha pod annotation.
	OriginPodAnnotation
	// OriginContainerAnnotation: the alpha per-container annotation.
	OriginContainerAnnotation
)

// String returns "none", "pod", "container", "pod annotation" or
// "container annotation".
func (o Origin) String() string {
	switch o {
	case OriginPod:
		return "pod"
	case OriginContainer:
		return "container"
	case OriginPodAnnotation:
		return "pod annotation"
	case OriginContainerAnnotation:
		return "container annotation"
	}
	return "none"
}

// Effective is what a kubelet uses for one container.
type Effective struct {
	// Container is the container (Kind is never LevelPod).
	Container Level
	// Options are the effective Windows options, a deep copy; nil when
	// neither the pod nor the container sets any. For the alpha rule only
	// the two GMSA fields are filled in.
	Options *corev1.WindowsSecurityContextOptions
	// From says where the GMSA pair came from.
	From Origin
}

// CredentialSpec returns what the kubelet hands the runtime (the CRI
// credential_spec): the effective contents, or "" for none. The name is
// never passed on, and the contents are not checked.
func (e Effective) CredentialSpec() string {
	if e.Options == nil || e.Options.GMSACredentialSpec == nil {
		return ""
	}
	return *e.Options.GMSACredentialSpec
}

// CredentialSpecName returns the effective gmsaCredentialSpecName, or "".
func (e Effective) CredentialSpecName() string {
	if e.Options == nil || e.Options.GMSACredentialSpecName == nil {
		return ""
	}
	return *e.Options.GMSACredentialSpecName
}

// EffectiveSpecs returns the effective Windows options of every container,
// init container and ephemeral container (in that order), by the rule of
// Kubernetes' DetermineEffectiveSecurityContext (kubelet 1.16 and later):
//   - a container without a securityContext inherits the pod's
//     windowsOptions; a container with a securityContext but without a pod
//     securityContext keeps its own as is;
//   - otherwise a container's windowsOptions override field by field,
//     except that the two GMSA fields go as a pair: if the container sets
//     either, both come from the container, so a container naming a
//     GMSACredentialSpec without contents runs without a credential spec
//     even when the pod has one.
func EffectiveSpecs(pod *corev1.Pod) []Effective {
	var podOpts *corev1.WindowsSecurityContextOptions
	podSC := pod.Spec.SecurityContext != nil
	if podSC {
		podOpts = pod.Spec.SecurityContext.WindowsOptions
	}
	out := make([]Effective, 0, len(pod.Spec.Containers)+len(pod.Spec.InitContainers)+len(pod.Spec.EphemeralContainers))
	_ = walkLevels(pod, func(l Level, own *corev1.WindowsSecurityContextOptions) error {
		if l.Kind == LevelPod {
			return nil
		}
		out = append(out, effective(l, podSC, podOpts, hasSecurityContext(pod, l), own))
		return nil
	})
	return out
}

// EffectiveSpecFor returns the effective options of the container of kind k
// (not LevelPod) named name, and whether it exists.
func EffectiveSpecFor(pod *corev1.Pod, k LevelKind, name string) (Effective, bool) {
	for _, e := range EffectiveSpecs(pod) {
		if e.Container.Kind == k && e.Container.Name == name {
			return e, true
		}
	}
	return Effective{}, false
}

func hasSecurityContext(pod *corev1.Pod, l Level) bool {
	switch l.Kind {
	case LevelContainer:
		return pod.Spec.Containers[l.Index].SecurityContext != nil
	case LevelInitContainer:
		return pod.Spec.InitContainers[l.Index].SecurityContext != nil
	case LevelEphemeralContainer:
		return pod.Spec.EphemeralContainers[l.Index].SecurityContext != nil
	}
	return false
}

func effective(l Level, podSC bool, podOpts *corev1.WindowsSecurityContextOptions, containerSC bool, own *corev1.WindowsSecurityContextOptions) Effective {
	e := Effective{Container: l}
	switch {
	case !podSC && !containerSC:
		return e
	case !containerSC || (podSC && own == nil):
		// Pod only, or a container securityContext without windowsOptions.
		e.Options = podOpts.DeepCopy()
		if hasGMSA(podOpts) {
			e.From = OriginPod
		}
		return e
	case !podSC:
		// Container only: its security context as is.
		e.Options = own.DeepCopy()
		if hasGMSA(own) {
			e.From = OriginContainer
		}
		return e
	}
	// Both, and the container has windowsOptions.
	merged := podOpts.DeepCopy()
	if merged == nil {
		merged = &corev1.WindowsSecurityContextOptions{}
	}
	if hasGMSA(podOpts) {
		e.From = OriginPod
	}
	if hasGMSA(own) {
		merged.GMSACredentialSpecName = cloneString(own.GMSACredentialSpecName)
		merged.GMSACredentialSpec = cloneString(own.GMSACredentialSpec)
		e.From = OriginContainer
	}
	if own.RunAsUserName != nil {
		merged.RunAsUserName = cloneString(own.RunAsUserName)
	}
	if own.HostProcess != nil {
		b := *own.HostProcess
		merged.HostProcess = &b
	}
	e.Options = merged
	return e
}

func hasGMSA(o *corev1.WindowsSecurityContextOptions) bool {
	return o != nil && (o.GMSACredentialSpecName != nil || o.GMSACredentialSpec != nil)
}

func cloneString(p *string) *string {
	if p == nil {
		return nil
	}
	s := *p
	return &s
}

// SandboxCredentialSpec returns the credential spec the kubelet gives the
// pod sandbox: the pod-level gmsaCredentialSpec only (containers' values are
// not considered), or "".
func SandboxCredentialSpec(pod *corev1.Pod) string {
	if sc := pod.Spec.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.GMSACredentialSpec != nil {
		return *sc.WindowsOptions.GMSACredentialSpec
	}
	return ""
}

// EffectiveSpecsAlpha returns every container's effective credential spec
// by the alpha kubelet's rule (Kubernetes 1.14) over the alpha annotations:
// the container's contents annotation if non-empty, else the pod's if
// non-empty, else none. Only contents annotations decide; Options carries
// that contents and the name annotation of the same level, if non-empty.
// securityContext fields are ignored.
func EffectiveSpecsAlpha(pod *corev1.Pod) []Effective {
	ann := pod.Annotations
	out := make([]Effective, 0, len(pod.Spec.Containers)+len(pod.Spec.InitContainers)+len(pod.Spec.EphemeralContainers))
	_ = walkLevels(pod, func(l Level, _ *corev1.WindowsSecurityContextOptions) error {
		if l.Kind == LevelPod {
			return nil
		}
		e := Effective{Container: l}
		if c := ann[ContainerContentsAnnotation(l.Name)]; c != "" {
			e.From = OriginContainerAnnotation
			e.Options = alphaOptions(ann[ContainerNameAnnotation(l.Name)], c)
		} else if c := ann[PodContentsAnnotation]; c != "" {
			e.From = OriginPodAnnotation
			e.Options = alphaOptions(ann[PodNameAnnotation], c)
		}
		out = append(out, e)
		return nil
	})
	return out
}

func alphaOptions(name, contents string) *corev1.WindowsSecurityContextOptions {
	o := &corev1.WindowsSecurityContextOptions{GMSACredentialSpec: &contents}
	if name != "" {
		o.GMSACredentialSpecName = &name
	}
	return o
}
