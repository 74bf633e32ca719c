package node

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// kernelTunables are the sysctls the kubelet sets as it starts (unless
// protectKernelDefaults makes it refuse to start instead), by name under
// /proc/sys, with the values it sets: [Node.Stop] puts back what they
// were.
var kernelTunables = map[string]string{
	"vm/overcommit_memory":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}

// hostNetns is where `ip netns` keeps named network namespaces.
const hostNetns = "/run/netns"

// cgroupFS is where the cgroup hierarchies are mounted.
const cgroupFS = "/sys/fs/cgroup"

// shimSockets is where containerd 1.6's shims put their sockets,
// whatever containerd's state directory: they make it, and each removes
// its socket as it exits.
const shimSockets = "/run/containerd/s"

// hostState is what a node may change on the machine, read before it
// starts.
type hostState struct {
	sysctls     map[string]string // by name under /proc/sys
	netns       []string          // entries of /run/netns
	kubepods    []string          // /sys/fs/cgroup/*/kubepods*
	shimSockets bool              // whether shimSockets existed
}

// readHostState reads the machine's state.
func readHostState() (hostState, error) {
	h := hostState{sysctls: map[string]string{}}
	for name := range kernelTunables {
		b, err := os.ReadFile(filepath.Join("/proc/sys", name))
		if err != nil {
			return h, fmt.Errorf("node: %w", err)
		}
		h.sysctls[name] = strings.TrimSpace(string(b))
	}
	h.netns = listDir(hostNetns)
	h.kubepods, _ = filepath.Glob(filepath.Join(cgroupFS, "*", "kubepods*"))
	_, err := os.Stat(shimSockets)
	h.shimSockets = err == nil
	return h, nil
}

// removeShimSockets removes the shims' socket directory and its parent
// when they are empty and were not there before: rmdir leaves a directory
// another containerd's shims still use.
func (h hostState) removeShimSockets() {
	if !h.shimSockets {
		_ = os.Remove(shimSockets)
		_ = os.Remove(filepath.Dir(shimSockets))
	}
}

// restoreSysctls writes back the tunables the kubelet changed: those that
// hold the kubelet's value now and held another before. A node started
// while another ran saw the kubelet's values already, and leaves them to
// the first, whichever stops first.
func (h hostState) restoreSysctls() error {
	var errs []error
	for _, name := range h.changedSysctls() {
		p := filepath.Join("/proc/sys", name)
		errs = append(errs, os.WriteFile(p, []byte(h.sysctls[name]+"\n"), 0o644))
	}
	return errors.Join(errs...)
}

// changedSysctls returns the tunables that hold the kubelet's value now
// and held another when h was read.
func (h hostState) changedSysctls() []string {
	var changed []string
	for name, was := range h.sysctls {
		kubelet := kernelTunables[name]
		b, err := os.ReadFile(filepath.Join("/proc/sys", name))
		if err == nil && was != kubelet && strings.TrimSpace(string(b)) == kubelet {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	return changed
}

// listDir returns the names in dir, or nil if it cannot be read.
func listDir(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// cgroupMounts returns the mount points of the cgroup hierarchies (v1
// and v2) under /sys/fs/cgroup.
func cgroupMounts() ([]string, error) {
	mounts, err := readMounts()
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, m := range mounts {
		if (m.fsType == "cgroup" || m.fsType == "cgroup2") && strings.HasPrefix(m.point, cgroupFS) {
			dirs = append(dirs, m.point)
		}
	}
	return dirs, nil
}

// makeCgroupRoot makes the cgroup root in every cgroup v1 hierarchy (the
// kubelet refuses a root that does not exist), with the cpuset of its
// parent (a new cpuset cgroup has none).
func makeCgroupRoot(root string) error {
	mounts, err := readMounts()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if m.fsType != "cgroup" || !strings.HasPrefix(m.point, cgroupFS) {
			continue
		}
		dir := filepath.Join(m.point, root)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("node: cgroup root: %w", err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			b, err := os.ReadFile(filepath.Join(m.point, f))
			if errors.Is(err, fs.ErrNotExist) {
				continue // not the cpuset hierarchy
			}
			if err != nil {
				return fmt.Errorf("node: cgroup root: %w", err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				return fmt.Errorf("node: cgroup root: %w", err)
			}
		}
	}
	return nil
}

// mount is one line of /proc/self/mountinfo.
type mount struct {
	point  string
	fsType string
}

// readMounts reads /proc/self/mountinfo.
func readMounts() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	defer f.Close()
	var mounts []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		mounts = append(mounts, mount{point: unescapeMount(fields[4]), fsType: fields[sep+1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("node: reading mountinfo: %w", err)
	}
	return mounts, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}
