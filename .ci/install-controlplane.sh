#!/usr/bin/env bash
# install-controlplane.sh: provide etcd and the kube-apiservers for the
# control-plane tests in interop/ (package github.com/ksa-go/ksa/interop/controlplane).
#
#   etcd            from Debian/Ubuntu's etcd-server package, unless already on PATH
#                   (or named by KSA_ETCD);
#   kube-apiserver  one per Kubernetes release the tests run on, each built from
#                   the Go module that requires that release of k8s.io/kubernetes:
#                     interop/                    -> interop/bin/kube-apiserver-1.37
#                     interop/apiservers/v1.36/   -> interop/bin/kube-apiserver-1.36
#                   (bin/ is git-ignored), unless that binary is already up to date
#                   (or KSA_KUBE_APISERVER_1_37, KSA_KUBE_APISERVER_1_36 name one).
#
# The script is idempotent: a second run installs and builds nothing. It prints
# its progress on stderr and, on stdout, one line per binary that the tests
# understand:
#
#   KSA_ETCD=/usr/bin/etcd
#   KSA_KUBE_APISERVER_1_37=/path/to/interop/bin/kube-apiserver-1.37
#   KSA_KUBE_APISERVER_1_36=/path/to/interop/bin/kube-apiserver-1.36
#
# so that CI can run `.ci/install-controlplane.sh >> "$GITHUB_ENV"`. (The tests
# find the binaries in interop/bin without these lines too.)
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
# The stamp records everything a binary depends on: the Go toolchain, the
# exact module versions (after replaces) of every package linked into
# kube-apiserver, and the linker flags. The build is skipped when the stamp
# matches.
apiserver_stamp() { # module-dir ldflags
	(
		cd "$1"
		go env GOVERSION GOOS GOARCH CGO_ENABLED
		go list -deps -f '{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}} {{.Version}}{{end}}{{end}}' "$apiserver_pkg" |
			sort -u
		printf 'ldflags %s\n' "$2"
	) | sha256sum | cut -d' ' -f1
}

# build_apiserver MODULE-DIR: builds the kube-apiserver of the k8s.io/kubernetes
# release MODULE-DIR requires into bin/kube-apiserver-MAJOR.MINOR, and prints
# its variable line.
build_apiserver() {
	local dir="$1"
	local k8s_version major minor
	k8s_version="$(cd "$dir" && go list -m -f '{{.Version}}' k8s.io/kubernetes)"
	major="${k8s_version#v}"
	major="${major%%.*}"
	minor="${k8s_version#v*.}"
	minor="${minor%%.*}"
	local var="KSA_KUBE_APISERVER_${major}_${minor}"
	local path="$bin/kube-apiserver-$major.$minor"

	if [ -n "${!var:-}" ]; then
		if [ ! -x "${!var}" ]; then
			log "$var=${!var} is not an executable file"
			exit 1
		fi
		log "kube-apiserver $k8s_version: $var=${!var}, not building"
		apiserver_lines+=("$var=${!var}")
		return
	fi

	# Without these the binary reports v0.0.0-master on /version and
	# --version, and the tests would not take it for $k8s_version.
	local pkg=k8s.io/component-base/version
	local ldflags="-s -w -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"

	local want
	want="$(apiserver_stamp "$dir" "$ldflags")"
	if [ -z "${KSA_FORCE_BUILD:-}" ] && [ -x "$path" ] &&
		[ "$(cat "$path.stamp" 2>/dev/null || true)" = "$want" ]; then
		log "kube-apiserver $k8s_version is up to date"
	else
		log "building kube-apiserver $k8s_version from ${dir#"$root/"} (the first build takes a few minutes)"
		mkdir -p "$bin"
		local start=$SECONDS
		# Build to a temporary name so that a concurrent test never runs a half-written binary.
		(cd "$dir" && go build -ldflags "$ldflags" -o "$path.tmp" "$apiserver_pkg")
		mv -f "$path.tmp" "$path"
		printf '%s\n' "$want" >"$path.stamp"
		log "built kube-apiserver $k8s_version in $((SECONDS - start))s"
	fi
	log "kube-apiserver: $path ($("$path" --version 2>/dev/null | head -n1))"
	apiserver_lines+=("$var=$path")
}

install_etcd
log "etcd:           $etcd_path ($("$etcd_path" --version 2>/dev/null | head -n1))"

apiserver_lines=()
build_apiserver "$interop"
for mod in "$interop"/apiservers/*/go.mod; do
	build_apiserver "$(dirname "$mod")"
done

# The binary of earlier versions of this script, which the tests no longer use.
rm -f "$bin/kube-apiserver" "$bin/kube-apiserver.stamp"

printf 'KSA_ETCD=%s\n' "$etcd_path"
printf '%s\n' "${apiserver_lines[@]}"
