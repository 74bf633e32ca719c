#!/usr/bin/env bash
# install-controlplane.sh: provide etcd and kube-apiserver for the control-plane
# tests in interop/ (package github.com/ksa-go/ksa/interop/controlplane).
#
#   etcd            from Debian/Ubuntu's etcd-server package, unless already on PATH
#                   (or named by KSA_ETCD);
#   kube-apiserver  built from the interop module into interop/bin/kube-apiserver
#                   (git-ignored), unless that binary is already up to date
#                   (or KSA_KUBE_APISERVER names one).
#
# The script is idempotent: a second run installs and builds nothing. It prints
# its progress on stderr and, on stdout, two lines that the tests understand:
#
#   KSA_ETCD=/usr/bin/etcd
#   KSA_KUBE_APISERVER=/path/to/interop/bin/kube-apiserver
#
# so that CI can run `.ci/install-controlplane.sh >> "$GITHUB_ENV"`.
#
# Set KSA_FORCE_BUILD=1 to rebuild kube-apiserver even when it looks up to date.
set -euo pipefail

log() { printf 'install-controlplane: %s\n' "$*" >&2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
interop="$root/interop"
bin="$interop/bin"
apiserver_pkg="k8s.io/kubernetes/cmd/kube-apiserver"

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	else
		sudo "$@"
	fi
}

# ---- etcd ----------------------------------------------------------------
install_etcd() {
	if [ -n "${KSA_ETCD:-}" ]; then
		if [ ! -x "$KSA_ETCD" ]; then
			log "KSA_ETCD=$KSA_ETCD is not an executable file"
			exit 1
		fi
		etcd_path="$KSA_ETCD"
		return
	fi
	if ! command -v etcd >/dev/null 2>&1; then
		log "etcd not on PATH: installing the etcd-server package"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >&2
	fi
	etcd_path="$(command -v etcd)"
}

# ---- kube-apiserver ----------------------------------------------------
# The stamp records everything the binary depends on: the Go toolchain and
# the exact module versions (after replaces) of every package linked into
# kube-apiserver. The build is skipped when the stamp matches.
apiserver_stamp() {
	(
		cd "$interop"
		go env GOVERSION GOOS GOARCH CGO_ENABLED
		go list -deps -f '{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}} {{.Version}}{{end}}{{end}}' "$apiserver_pkg" |
			sort -u
		printf 'ldflags %s\n' "$ldflags"
	) | sha256sum | cut -d' ' -f1
}

build_apiserver() {
	if [ -n "${KSA_KUBE_APISERVER:-}" ]; then
		if [ ! -x "$KSA_KUBE_APISERVER" ]; then
			log "KSA_KUBE_APISERVER=$KSA_KUBE_APISERVER is not an executable file"
			exit 1
		fi
		apiserver_path="$KSA_KUBE_APISERVER"
		return
	fi
	apiserver_path="$bin/kube-apiserver"

	local k8s_version
	k8s_version="$(cd "$interop" && go list -m -f '{{.Version}}' k8s.io/kubernetes)"
	# Without these the binary reports v0.0.0-master on /version.
	local major minor
	major="${k8s_version#v}"
	major="${major%%.*}"
	minor="${k8s_version#v*.}"
	minor="${minor%%.*}"
	local pkg=k8s.io/component-base/version
	ldflags="-s -w -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"

	local want
	want="$(apiserver_stamp)"
	if [ -z "${KSA_FORCE_BUILD:-}" ] && [ -x "$apiserver_path" ] &&
		[ "$(cat "$apiserver_path.stamp" 2>/dev/null || true)" = "$want" ]; then
		log "kube-apiserver $k8s_version is up to date"
		return
	fi

	log "building kube-apiserver $k8s_version (the first build takes a few minutes)"
	mkdir -p "$bin"
	local start=$SECONDS
	# Build to a temporary name so that a concurrent test never runs a half-written binary.
	(cd "$interop" && go build -ldflags "$ldflags" -o "$apiserver_path.tmp" "$apiserver_pkg")
	mv -f "$apiserver_path.tmp" "$apiserver_path"
	printf '%s\n' "$want" >"$apiserver_path.stamp"
	log "built kube-apiserver in $((SECONDS - start))s"
}

install_etcd
build_apiserver

log "etcd:           $etcd_path ($("$etcd_path" --version 2>/dev/null | head -n1))"
log "kube-apiserver: $apiserver_path ($("$apiserver_path" --version 2>/dev/null | head -n1))"
printf 'KSA_ETCD=%s\n' "$etcd_path"
printf 'KSA_KUBE_APISERVER=%s\n' "$apiserver_path"
