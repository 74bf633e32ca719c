#!/usr/bin/env bash
# install-node.sh: provide a real node for the node tests in interop/
# (package github.com/ksa-go/ksa/interop/node), beside the control plane of
# .ci/install-controlplane.sh.
#
#   containerd, runc  from Debian/Ubuntu's packages of those names, unless
#                     already on PATH (or named by KSA_CONTAINERD, KSA_RUNC);
#   kubelet           built from the interop module, the one that requires
#                     k8s.io/kubernetes v1.37.2 and builds kube-apiserver-1.37,
#                     with the same build cache: interop/bin/kubelet-1.37,
#                     unless up to date (or KSA_KUBELET_1_37 names one).
#
# The node's own small programs (the CNI plugin, the pod sandbox's program,
# the tests' workload: interop/node/cmd) are built by the harness as it
# starts a node, with go build, into its temporary directory, and their
# images made there (package interop/node/image): nothing is pulled, and
# nothing here can go stale.
#
# The harness uses no containerd it did not start (one the package starts
# as a system service, on a machine with systemd, is left alone): it runs
# its own containerd and kubelet, with their own directories, for each node.
#
# The script is idempotent: a second run installs and builds nothing. It
# prints its progress on stderr and, on stdout, one line per binary that the
# tests understand:
#
#   KSA_CONTAINERD=/usr/bin/containerd
#   KSA_RUNC=/usr/sbin/runc
#   KSA_KUBELET_1_37=/path/to/interop/bin/kubelet-1.37
#
# so that CI can run `.ci/install-node.sh >> "$GITHUB_ENV"`. (The tests find
# them without these lines too.) Only the kubelet of v1.37.2 is built: one
# node release is enough for the node tests, and each kubelet build costs
# several CPU-minutes.
#
# Set KSA_FORCE_BUILD=1 to rebuild the kubelet even when it looks up to date.
set -euo pipefail

log() { printf 'install-node: %s\n' "$*" >&2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
interop="$root/interop"
bin="$interop/bin"
kubelet_pkg="k8s.io/kubernetes/cmd/kubelet"

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	else
		sudo "$@"
	fi
}

# ---- containerd, runc ----------------------------------------------------
# program VAR NAME: the path of NAME, from $VAR when set, else from PATH
# (and the sbin directories, which a non-root PATH may lack, where
# apt-get would put it).
program() {
	local var="$1" name="$2"
	if [ -n "${!var:-}" ]; then
		if [ ! -x "${!var}" ]; then
			log "$var=${!var} is not an executable file"
			exit 1
		fi
		printf '%s\n' "${!var}"
		return
	fi
	PATH="$PATH:/usr/sbin:/sbin" command -v "$name" || true
}

packages=()
[ -n "$(program KSA_CONTAINERD containerd)" ] || packages+=(containerd)
[ -n "$(program KSA_RUNC runc)" ] || packages+=(runc)
if [ "${#packages[@]}" -gt 0 ]; then
	log "installing ${packages[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}" >&2
fi
containerd_path="$(program KSA_CONTAINERD containerd)"
runc_path="$(program KSA_RUNC runc)"
log "containerd: $containerd_path ($("$containerd_path" --version 2>/dev/null | head -n1))"
log "runc:       $runc_path ($("$runc_path" --version 2>/dev/null | head -n1))"

# ---- kubelet --------------------------------------------------------------
# The stamp records what the binary depends on, as install-controlplane.sh's
# does for kube-apiserver: the Go toolchain, the module versions of every
# package linked in, and the linker flags.
stamp() { # package ldflags
	(
		cd "$interop"
		go env GOVERSION GOOS GOARCH CGO_ENABLED
		go list -deps -f '{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}} {{.Version}}{{end}}{{end}}' "$1" |
			sort -u
		printf 'ldflags %s\n' "$2"
	) | sha256sum | cut -d' ' -f1
}

k8s_version="$(cd "$interop" && go list -m -f '{{.Version}}' k8s.io/kubernetes)"
major="${k8s_version#v}"
major="${major%%.*}"
minor="${k8s_version#v*.}"
minor="${minor%%.*}"
kubelet_var="KSA_KUBELET_${major}_${minor}"
kubelet_path="$bin/kubelet-$major.$minor"
if [ -n "${!kubelet_var:-}" ]; then
	if [ ! -x "${!kubelet_var}" ]; then
		log "$kubelet_var=${!kubelet_var} is not an executable file"
		exit 1
	fi
	kubelet_path="${!kubelet_var}"
	log "kubelet $k8s_version: $kubelet_var=$kubelet_path, not building"
else
	# Without these the kubelet reports v0.0.0-master, and registers its
	# node with that version.
	pkg=k8s.io/component-base/version
	ldflags="-s -w -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
	want="$(stamp "$kubelet_pkg" "$ldflags")"
	if [ -z "${KSA_FORCE_BUILD:-}" ] && [ -x "$kubelet_path" ] &&
		[ "$(cat "$kubelet_path.stamp" 2>/dev/null || true)" = "$want" ]; then
		log "kubelet $k8s_version is up to date"
	else
		log "building kubelet $k8s_version from interop (the first build takes several minutes)"
		mkdir -p "$bin"
		start=$SECONDS
		# A temporary name, so that a concurrent test never runs a half-written binary.
		(cd "$interop" && go build -ldflags "$ldflags" -o "$kubelet_path.tmp" "$kubelet_pkg")
		mv -f "$kubelet_path.tmp" "$kubelet_path"
		printf '%s\n' "$want" >"$kubelet_path.stamp"
		log "built kubelet $k8s_version in $((SECONDS - start))s"
	fi
	log "kubelet:    $kubelet_path ($("$kubelet_path" --version 2>/dev/null | head -n1))"
fi

printf 'KSA_CONTAINERD=%s\n' "$containerd_path"
printf 'KSA_RUNC=%s\n' "$runc_path"
printf '%s=%s\n' "$kubelet_var" "$kubelet_path"
