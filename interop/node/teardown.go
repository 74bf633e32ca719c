package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

// Bounds of the steps of Stop.
const (
	podDeleteTimeout = 60 * time.Second
	processGrace     = 10 * time.Second
	criTimeout       = 30 * time.Second
)

// Stop tears the node down and leaves the machine as it was: it deletes
// the node's pods (the kubelet stops their containers and unmounts their
// volumes), stops the kubelet, stops and removes what sandboxes remain
// through containerd's CRI (their network namespaces go with them), stops
// containerd, kills any process left in the node's cgroups or running from
// its directory (a shim), unmounts everything under [Files.Dir], removes
// the cgroups under [Node.CgroupRoot], deletes the Node object, puts back
// the kernel tunables the kubelet changed, and removes [Files.Dir]. Each
// step runs even when one before failed; the error joins their failures.
// Only the first call does anything; later calls return its result.
//
// [Node.Leftovers] then says what, if anything, is left.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() {
		var errs []error
		add := func(err error) {
			if err != nil {
				errs = append(errs, err)
			}
		}
		if n.kubelet != nil {
			add(n.deletePods())
			n.kubelet.Terminate(processGrace)
		}
		if n.containerd != nil {
			add(n.removeSandboxes())
			n.containerd.Terminate(processGrace)
		}
		if n.criConn != nil {
			_ = n.criConn.Close()
		}
		add(n.killLeftProcesses())
		add(n.unmountAll())
		add(n.removeCgroups())
		if n.kubelet != nil {
			add(n.deleteNodeObject())
		}
		if n.host.sysctls != nil {
			add(n.host.restoreSysctls())
			n.host.removeShimSockets()
		}
		if n.Files.Dir != "" {
			add(os.RemoveAll(n.Files.Dir))
		}
		if err := errors.Join(errs...); err != nil {
			n.stopErr = fmt.Errorf("node: stopping %s: %w", n.Name, err)
		}
	})
	return n.stopErr
}

// deletePods removes the static pods' manifests, deletes the pods bound
// to the node, and waits until the kubelet has finished them (it deletes
// each pod object once its containers are stopped and its volumes
// unmounted).
func (n *Node) deletePods() error {
	entries, _ := os.ReadDir(n.Files.StaticPods)
	for _, e := range entries {
		_ = os.Remove(filepath.Join(n.Files.StaticPods, e.Name()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), podDeleteTimeout)
	defer cancel()
	pods := n.cp.Clientset().CoreV1().Pods(metav1.NamespaceAll)
	sel := metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.Name}
	list, err := pods.List(ctx, sel)
	if err != nil {
		return fmt.Errorf("listing the node's pods: %w", err)
	}
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		err := n.cp.Clientset().CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(5))})
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("deleting pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		list, err := pods.List(ctx, sel)
		if err == nil && len(nonMirror(list.Items)) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the kubelet did not finish the node's pods within %v (the teardown goes on)", podDeleteTimeout)
		case <-tick.C:
		}
	}
}

// nonMirror returns the pods that are not mirror pods (whose static pods
// go with their manifests).
func nonMirror(pods []corev1.Pod) []corev1.Pod {
	return slices.DeleteFunc(pods, func(p corev1.Pod) bool {
		_, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]
		return mirror
	})
}

// removeSandboxes stops and removes every pod sandbox containerd holds
// (with their containers and network namespaces): what the kubelet left.
func (n *Node) removeSandboxes() error {
	ctx, cancel := context.WithTimeout(context.Background(), criTimeout)
	defer cancel()
	resp, err := n.cri.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("listing sandboxes: %w", err)
	}
	var errs []error
	for _, s := range resp.GetItems() {
		if _, err := n.cri.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("stopping sandbox %s: %w", s.GetId(), err))
		}
		if _, err := n.cri.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("removing sandbox %s: %w", s.GetId(), err))
		}
	}
	return errors.Join(errs...)
}

// killLeftProcesses kills the processes still in the node's cgroups or
// running with its directory on their command line (containerd's shims),
// and waits for them to go.
func (n *Node) killLeftProcesses() error {
	for _, pid := range n.leftProcesses() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// The kernel gives no event when another's process exits: poll.
	if !poll(processGrace, func() bool { return len(n.leftProcesses()) == 0 }) {
		return fmt.Errorf("processes %v still running", n.leftProcesses())
	}
	return nil
}

// leftProcesses returns the processes in the node's cgroups or with its
// directory on their command line, except this one.
func (n *Node) leftProcesses() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if n.Files.Dir != "" {
			if cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil &&
				strings.Contains(string(cmd), n.Files.Dir) {
				pids = append(pids, pid)
				continue
			}
		}
		if cg, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup")); err == nil && n.CgroupRoot != "" &&
			strings.Contains(string(cg), ":"+n.CgroupRoot+"/") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// unmountAll unmounts every mount under the node's directory, the
// deepest first.
func (n *Node) unmountAll() error {
	if n.Files.Dir == "" {
		return nil
	}
	var errs []error
	for range 3 { // mounts stacked on one point take one pass each
		points, err := n.mountsUnder()
		if err != nil {
			return err
		}
		if len(points) == 0 {
			return nil
		}
		errs = errs[:0]
		for _, p := range points {
			if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
			}
		}
	}
	return errors.Join(errs...)
}

// mountsUnder returns the mount points under the node's directory,
// deepest (longest) first.
func (n *Node) mountsUnder() ([]string, error) {
	mounts, err := readMounts()
	if err != nil {
		return nil, err
	}
	var points []string
	for _, m := range mounts {
		if under(m.point, n.Files.Dir) {
			points = append(points, m.point)
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	return points, nil
}

// removeCgroups removes the cgroup root's tree in every hierarchy, the
// leaves first.
func (n *Node) removeCgroups() error {
	if n.CgroupRoot == "" {
		return nil
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range mounts {
		root := filepath.Join(m, n.CgroupRoot)
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.Reverse(dirs) // children after their parents in a walk
		for _, d := range dirs {
			if err := rmdirCgroup(d); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// rmdirCgroup removes an empty cgroup, trying again for a while when it
// is busy (the kernel frees a cgroup shortly after its last process).
func rmdirCgroup(dir string) error {
	var err error
	poll(5*time.Second, func() bool {
		err = unix.Rmdir(dir)
		if errors.Is(err, unix.ENOENT) {
			err = nil
		}
		return !errors.Is(err, unix.EBUSY) // no event tells when a cgroup is free
	})
	if err != nil {
		return fmt.Errorf("removing cgroup %s: %w", dir, err)
	}
	return nil
}

// poll calls done until it returns true, every 50 ms for at most timeout,
// and returns its last answer.
func poll(timeout time.Duration, done func() bool) bool {
	if done() {
		return true
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			return done()
		case <-tick.C:
			if done() {
				return true
			}
		}
	}
}

// deleteNodeObject deletes the Node object, so that a control plane that
// outlives the node holds no node that will never report again.
func (n *Node) deleteNodeObject() error {
	ctx, cancel := context.WithTimeout(context.Background(), criTimeout)
	defer cancel()
	err := n.cp.Clientset().CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting node %s: %w", n.Name, err)
	}
	return nil
}

// Leftovers returns what the node left on the machine, after [Node.Stop]:
// processes in its cgroups or running from its directory, mounts under
// its directory (its network namespaces among them), cgroups under its
// root in any hierarchy, kubepods cgroups or network namespaces in
// /run/netns that were not there before it started, kernel tunables not
// put back, containerd's shim socket directory if it was not there before
// (and another node does not use it now), and its directory. Empty when
// the teardown was clean.
func (n *Node) Leftovers() []string {
	var left []string
	for _, pid := range n.leftProcesses() {
		cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		left = append(left, fmt.Sprintf("process %d (%s)", pid, strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " ")))
	}
	if n.Files.Dir != "" {
		points, err := n.mountsUnder()
		if err != nil {
			left = append(left, err.Error())
		}
		for _, p := range points {
			left = append(left, "mount "+p)
		}
		if _, err := os.Stat(n.Files.Dir); err == nil {
			left = append(left, "directory "+n.Files.Dir)
		}
	}
	if mounts, err := cgroupMounts(); err == nil && n.CgroupRoot != "" {
		for _, m := range mounts {
			if _, err := os.Stat(filepath.Join(m, n.CgroupRoot)); err == nil {
				left = append(left, "cgroup "+filepath.Join(m, n.CgroupRoot))
			}
		}
	}
	kubepods, _ := filepath.Glob(filepath.Join(cgroupFS, "*", "kubepods*"))
	for _, p := range kubepods {
		if !slices.Contains(n.host.kubepods, p) {
			left = append(left, "cgroup "+p)
		}
	}
	for _, name := range listDir(hostNetns) {
		if !slices.Contains(n.host.netns, name) {
			left = append(left, "network namespace "+filepath.Join(hostNetns, name))
		}
	}
	if _, err := os.Stat(shimSockets); err == nil && n.host.sysctls != nil && !n.host.shimSockets {
		left = append(left, "directory "+shimSockets)
	}
	for _, name := range n.host.changedSysctls() {
		left = append(left, fmt.Sprintf("sysctl %s = %s, was %s", strings.ReplaceAll(name, "/", "."), kernelTunables[name], n.host.sysctls[name]))
	}
	slices.Sort(left)
	return left
}
