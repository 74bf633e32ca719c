package credspec

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// LevelKind says which kind of windowsOptions block a [Level] is.
type LevelKind uint8

// The levels that can carry GMSA settings.
const (
	// LevelPod is spec.securityContext.windowsOptions.
	LevelPod LevelKind = iota
	// LevelContainer is spec.containers[i].securityContext.windowsOptions.
	LevelContainer
	// LevelInitContainer is spec.initContainers[i]...
	LevelInitContainer
	// LevelEphemeralContainer is spec.ephemeralContainers[i]...
	LevelEphemeralContainer
)

// String returns the word used in admission messages: "pod", "container",
// "init container", "ephemeral container".
func (k LevelKind) String() string {
	switch k {
	case LevelPod:
		return "pod"
	case LevelContainer:
		return "container"
	case LevelInitContainer:
		return "init container"
	case LevelEphemeralContainer:
		return "ephemeral container"
	}
	return "LevelKind(" + strconv.Itoa(int(k)) + ")"
}

// listPath is the JSON pointer of the container list, "" for the pod.
func (k LevelKind) listPath() string {
	switch k {
	case LevelContainer:
		return "/spec/containers/"
	case LevelInitContainer:
		return "/spec/initContainers/"
	case LevelEphemeralContainer:
		return "/spec/ephemeralContainers/"
	}
	return ""
}

// Level is one place a pod sets GMSA settings: the pod itself, or one
// container of a kind.
type Level struct {
	// Kind says whether it is the pod or which kind of container.
	Kind LevelKind
	// Name is the pod's name for LevelPod, else the container's.
	Name string
	// Index is the container's index in its list; -1 for the pod.
	Index int
}

// String returns `<kind> "<name>"`, as admission messages name the level.
func (l Level) String() string { return fmt.Sprintf("%s %q", l.Kind, l.Name) }

// ContentsPath returns the JSON pointer of the level's gmsaCredentialSpec
// field, the path the mutating webhook adds it at.
func (l Level) ContentsPath() string {
	if l.Kind == LevelPod {
		return "/spec/securityContext/windowsOptions/gmsaCredentialSpec"
	}
	return l.Kind.listPath() + strconv.Itoa(l.Index) + "/securityContext/windowsOptions/gmsaCredentialSpec"
}

// walkLevels calls fn for the pod level and every container, init container
// and ephemeral container, in that order (windows-gmsa's order, with the
// kinds it does not visit last), with that level's windowsOptions (nil when
// unset). It stops at the first error.
func walkLevels(pod *corev1.Pod, fn func(Level, *corev1.WindowsSecurityContextOptions) error) error {
	var podOpts *corev1.WindowsSecurityContextOptions
	if pod.Spec.SecurityContext != nil {
		podOpts = pod.Spec.SecurityContext.WindowsOptions
	}
	if err := fn(Level{Kind: LevelPod, Name: pod.Name, Index: -1}, podOpts); err != nil {
		return err
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if err := fn(Level{Kind: LevelContainer, Name: c.Name, Index: i}, windowsOptions(c.SecurityContext)); err != nil {
			return err
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if err := fn(Level{Kind: LevelInitContainer, Name: c.Name, Index: i}, windowsOptions(c.SecurityContext)); err != nil {
			return err
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		c := &pod.Spec.EphemeralContainers[i]
		if err := fn(Level{Kind: LevelEphemeralContainer, Name: c.Name, Index: i}, windowsOptions(c.SecurityContext)); err != nil {
			return err
		}
	}
	return nil
}

func windowsOptions(sc *corev1.SecurityContext) *corev1.WindowsSecurityContextOptions {
	if sc == nil {
		return nil
	}
	return sc.WindowsOptions
}

// findOptions returns the windowsOptions of the level of kind k named name
// in pod, and whether such a level exists. Containers match by name within
// their kind, as windows-gmsa matches them on update.
func findOptions(pod *corev1.Pod, k LevelKind, name string) (*corev1.WindowsSecurityContextOptions, bool) {
	switch k {
	case LevelPod:
		if pod.Spec.SecurityContext == nil {
			return nil, true
		}
		return pod.Spec.SecurityContext.WindowsOptions, true
	case LevelContainer:
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name == name {
				return windowsOptions(pod.Spec.Containers[i].SecurityContext), true
			}
		}
	case LevelInitContainer:
		for i := range pod.Spec.InitContainers {
			if pod.Spec.InitContainers[i].Name == name {
				return windowsOptions(pod.Spec.InitContainers[i].SecurityContext), true
			}
		}
	case LevelEphemeralContainer:
		for i := range pod.Spec.EphemeralContainers {
			if pod.Spec.EphemeralContainers[i].Name == name {
				return windowsOptions(pod.Spec.EphemeralContainers[i].SecurityContext), true
			}
		}
	}
	return nil, false
}
