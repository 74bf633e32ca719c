package node

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RootCAConfigMap is the ConfigMap every namespace holds for its pods'
// kube-api-access volumes: kube-controller-manager makes it in a real
// cluster; [Node.PrepareNamespace] here.
const RootCAConfigMap = "kube-root-ca.crt"

// PodTimeout bounds [Node.RunPod] and [Node.ProbeFiles] when their
// context has no deadline.
const PodTimeout = 2 * time.Minute

// waitingFailures are the reasons of a waiting container that will not
// start by itself.
var waitingFailures = map[string]bool{
	"ErrImageNeverPull":          true,
	"ErrImagePull":               true,
	"ImagePullBackOff":           true,
	"InvalidImageName":           true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
	"RunContainerError":          true,
	"CrashLoopBackOff":           true,
}

// PrepareNamespace makes what pods in namespace need and that
// kube-controller-manager would make (none runs here): the ServiceAccount
// "default" and the ConfigMap [RootCAConfigMap] holding the control
// plane's CA. Either may exist already.
func (n *Node) PrepareNamespace(ctx context.Context, namespace string) error {
	cs := n.cp.Clientset().CoreV1()
	_, err := cs.ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("node: ServiceAccount default in %s: %w", namespace, err)
	}
	_, err = cs.ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: RootCAConfigMap},
		Data:       map[string]string{"ca.crt": string(n.cp.CAPEM)},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("node: ConfigMap %s in %s: %w", RootCAConfigMap, namespace, err)
	}
	return nil
}

// ProbePod returns a pod named name that runs [ProbeImage]: it prints each
// of files (see [Node.ProbeFiles]) and waits to be deleted. Tests add the
// volumes the files are in.
func ProbePod(name string, files ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "probe",
				Image: ProbeImage,
				Args:  append([]string{"-wait"}, files...),
			}},
			TerminationGracePeriodSeconds: new(int64(5)),
		},
	}
}

// RunPod creates pod in namespace bound to the node (spec.nodeName: no
// scheduler runs), with imagePullPolicy Never where it is not set (no
// registry is reachable), and waits until it is Running. It fails with an
// error matching [ErrNotReady] when the pod fails or a container cannot
// start, naming the reason. Without a deadline in ctx, [PodTimeout]
// applies.
func (n *Node) RunPod(ctx context.Context, namespace string, pod *corev1.Pod) (*corev1.Pod, error) {
	return n.runPod(ctx, namespace, pod, corev1.PodRunning)
}

// RunPodToCompletion is [Node.RunPod] for a pod whose containers exit:
// restartPolicy Never where it is not set, and it waits until the pod has
// Succeeded. A pod that fails matches [ErrNotReady].
func (n *Node) RunPodToCompletion(ctx context.Context, namespace string, pod *corev1.Pod) (*corev1.Pod, error) {
	pod = pod.DeepCopy()
	if pod.Spec.RestartPolicy == "" {
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	return n.runPod(ctx, namespace, pod, corev1.PodSucceeded)
}

// runPod creates pod as [Node.RunPod] says and waits until it is in phase
// want.
func (n *Node) runPod(ctx context.Context, namespace string, pod *corev1.Pod, want corev1.PodPhase) (*corev1.Pod, error) {
	ctx, cancel := podContext(ctx)
	defer cancel()
	pod = pod.DeepCopy()
	pod.Spec.NodeName = n.Name
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].ImagePullPolicy == "" {
			pod.Spec.Containers[i].ImagePullPolicy = corev1.PullNever
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].ImagePullPolicy == "" {
			pod.Spec.InitContainers[i].ImagePullPolicy = corev1.PullNever
		}
	}
	pods := n.cp.Clientset().CoreV1().Pods(namespace)
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("node: creating pod %s/%s: %w", namespace, pod.Name, err)
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	last := created
	for {
		p, err := pods.Get(ctx, created.Name, metav1.GetOptions{})
		if err == nil {
			last = p
			if p.Status.Phase == want {
				return p, nil
			}
			if err := podFailure(p); err != nil {
				return nil, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: pod %s/%s is %s after %v: %s", ErrNotReady, namespace, created.Name, last.Status.Phase, ctx.Err(), podConditions(last))
		case <-tick.C:
		}
	}
}

// podFailure returns an error when p will not run: failed or succeeded,
// or a container waiting for a reason that does not pass by itself.
func podFailure(p *corev1.Pod) error {
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return fmt.Errorf("%w: pod %s/%s %s: %s %s", ErrNotReady, p.Namespace, p.Name, p.Status.Phase, p.Status.Reason, p.Status.Message)
	}
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && waitingFailures[w.Reason] {
			return fmt.Errorf("%w: pod %s/%s container %s: %s: %s", ErrNotReady, p.Namespace, p.Name, cs.Name, w.Reason, w.Message)
		}
	}
	return nil
}

// podConditions summarizes p's conditions and waiting containers.
func podConditions(p *corev1.Pod) string {
	var parts []string
	for _, c := range p.Status.Conditions {
		s := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			s += " (" + c.Reason + ": " + c.Message + ")"
		}
		parts = append(parts, s)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			parts = append(parts, fmt.Sprintf("container %s waiting: %s %s", cs.Name, w.Reason, w.Message))
		}
	}
	if len(parts) == 0 {
		return "no status yet"
	}
	return strings.Join(parts, "; ")
}

// DeletePod deletes a pod and waits until the kubelet has finished it
// (the object is gone). Without a deadline in ctx, [PodTimeout] applies.
func (n *Node) DeletePod(ctx context.Context, namespace, name string) error {
	ctx, cancel := podContext(ctx)
	defer cancel()
	pods := n.cp.Clientset().CoreV1().Pods(namespace)
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("node: deleting pod %s/%s: %w", namespace, name, err)
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: pod %s/%s still there after %v", ErrNotReady, namespace, name, ctx.Err())
		case <-tick.C:
		}
	}
}

// Logs returns what container of pod has written so far (stdout and
// stderr, in order), read from the kubelet's log files: the API server's
// pods/log would ask the kubelet at the node's address, which is not
// loopback.
func (n *Node) Logs(pod *corev1.Pod, container string) (string, error) {
	dir := filepath.Join(n.Files.PodLogs, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID), container)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("node: logs of %s/%s %s: %w", pod.Namespace, pod.Name, container, err)
	}
	var out strings.Builder
	for _, e := range entries { // 0.log, then 1.log after a restart
		if !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", fmt.Errorf("node: %w", err)
		}
		out.WriteString(parseCRILog(b))
	}
	return out.String(), nil
}

// parseCRILog returns the content of a log in the CRI's format: lines of
// "TIME STREAM TAG CONTENT", TAG P for a part of a line and F for its end.
func parseCRILog(b []byte) string {
	var out strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 4)
		if len(fields) < 3 {
			continue
		}
		content := ""
		if len(fields) == 4 {
			content = fields[3]
		}
		out.WriteString(content)
		if fields[2] != "P" {
			out.WriteByte('\n')
		}
	}
	return out.String()
}

// ProbeFile is one file as a pod of [ProbePod] printed it.
type ProbeFile struct {
	Path  string `json:"path"`
	Data  string `json:"data"`
	Error string `json:"error"`
}

// ProbeFiles waits until the probe container of pod (see [ProbePod]) has
// printed every file it was given, and returns them by path. A file the
// probe could not read is returned with its Error set. Without a deadline
// in ctx, [PodTimeout] applies.
func (n *Node) ProbeFiles(ctx context.Context, pod *corev1.Pod) (map[string]ProbeFile, error) {
	ctx, cancel := podContext(ctx)
	defer cancel()
	var want []string
	for _, c := range pod.Spec.Containers {
		if c.Name == "probe" {
			for _, a := range c.Args {
				if !strings.HasPrefix(a, "-") {
					want = append(want, a)
				}
			}
		}
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		logs, err := n.Logs(pod, "probe")
		got := map[string]ProbeFile{}
		if err == nil {
			for _, line := range strings.Split(logs, "\n") {
				var f ProbeFile
				if json.Unmarshal([]byte(line), &f) == nil && f.Path != "" {
					got[f.Path] = f
				}
			}
			if len(got) >= len(want) {
				return got, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: pod %s/%s printed %d of %d files (%v): %v", ErrNotReady, pod.Namespace, pod.Name, len(got), len(want), err, ctx.Err())
		case <-tick.C:
		}
	}
}

// podContext bounds ctx by PodTimeout when it has no deadline.
func podContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, PodTimeout)
}

// isNotFound reports whether err is the API server's 404.
func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
