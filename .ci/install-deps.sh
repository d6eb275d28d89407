#!/usr/bin/env bash
# Installs what ward's build, tests, demo, benchmark and man page need on Debian 12.
#
#   .ci/install-deps.sh               install (or bring up to date) every package below
#   .ci/install-deps.sh --if-missing  do nothing unless a package is missing; then install
#                                     only the missing ones (used by `make demo`)
#   .ci/install-deps.sh --check       exit 1 if a package is missing, install nothing
#   .ci/install-deps.sh --list        print the package list
#
# Runs as root without sudo. As another user it uses `sudo -n` when that works without a
# password, and otherwise says which command to run. `apt-get update` runs only when the
# package lists are absent, lack one of the packages, or an install from them fails.
set -euo pipefail

PACKAGES=(
	build-essential pkg-config # gcc, make, libc headers
	libseccomp-dev libcap-dev libnl-3-dev libnl-route-3-dev libjansson-dev
	bats bats-assert bats-support jq # integration tests
	busybox-static                   # test and demo rootfs (/bin/busybox)
	crun runc                        # reference runtimes (tests, benchmark)
	go-md2man                        # man/ward.8 from man/ward.8.md
	valgrind                         # make valgrind
	clang libclang-rt-14-dev         # make fuzz, the fuzz run of make test: libFuzzer, ASan, UBSan
	iproute2 procps util-linux       # ip, ps, unshare/nsenter/mount
	qemu-system-x86 linux-image-amd64 e2fsprogs # tests/vm: a real kernel (cgroup2, AppArmor) under qemu, ext4 scratch disk
	apparmor                         # apparmor_parser: ward loads its ward-default profile
	protobuf-c-compiler libprotobuf-c-dev libprotobuf-dev golang-github-containerd-containerd-dev # containerd-shim-ward-v2: protoc-c + containerd's .proto files
	containerd                       # tests/containerd: a private containerd 1.6 drives containerd-shim-ward-v2 (ctr)
	podman                           # tests/podman.bats: podman 4.3 with --runtime ward (and runc)
	python3-grpcio python3-grpc-tools containernetworking-plugins # tests/cri: a CRI client (gRPC) and CNI plugins for pods through containerd's CRI plugin
)

mode=install
case "${1:-}" in
"") ;;
--if-missing) mode=if-missing ;;
--check) mode=check ;;
--list) printf '%s\n' "${PACKAGES[@]}"; exit 0 ;;
-h | --help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
*) echo "install-deps: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac

say() { printf 'install-deps: %s\n' "$*"; }

# Packages that dpkg does not report as fully installed ("ii").
missing_packages() {
	local p status
	for p in "${PACKAGES[@]}"; do
		status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
		[[ "$status" == ii* ]] || printf '%s\n' "$p"
	done
}

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
	say "this script needs Debian's dpkg and apt-get (Debian 12 'bookworm' is supported)."
	say "install these packages (or your distribution's equivalents) by hand:"
	say "  ${PACKAGES[*]}"
	exit 1
fi

mapfile -t missing < <(missing_packages)

case "$mode" in
check)
	if [ ${#missing[@]} -eq 0 ]; then
		say "all ${#PACKAGES[@]} packages are installed"
		exit 0
	fi
	say "missing: ${missing[*]}"
	exit 1
	;;
if-missing)
	if [ ${#missing[@]} -eq 0 ]; then
		say "all ${#PACKAGES[@]} packages are installed"
		exit 0
	fi
	to_install=("${missing[@]}")
	;;
install)
	to_install=("${PACKAGES[@]}")
	;;
esac

# Root, or a non-interactive sudo, or a clear message.
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	if [ ${#missing[@]} -eq 0 ]; then
		say "all ${#PACKAGES[@]} packages are installed (not root: nothing upgraded)"
		exit 0
	fi
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		SUDO=(sudo -n)
		say "not root: using sudo"
	else
		say "missing packages: ${missing[*]}"
		say "installing them needs root; run:"
		say "  sudo $0${1:+ $1}"
		say "or: sudo apt-get install ${missing[*]}"
		exit 1
	fi
fi

export DEBIAN_FRONTEND=noninteractive
APT=("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Use-Pty=0)

# True when the local package lists know every package we are about to install.
lists_know_all() {
	local policy
	compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null || return 1
	policy=$(apt-cache policy "$@" 2>/dev/null) || return 1
	# One "Candidate:" line per known package; "(none)" when no list offers it.
	[ "$(grep -c 'Candidate: [^(]' <<<"$policy")" -eq $# ]
}

updated=no
apt_update() {
	say "apt-get update"
	"${APT[@]}" update </dev/null
	updated=yes
}

if [ ${#missing[@]} -gt 0 ]; then
	say "installing missing packages: ${missing[*]}"
else
	say "all packages present; making sure they are installed and current: ${to_install[*]}"
fi

lists_know_all "${to_install[@]}" || apt_update
if ! "${APT[@]}" install --no-install-recommends "${to_install[@]}" </dev/null; then
	# Stale lists (e.g. a 404 for a superseded version): refresh once and retry.
	[ "$updated" = yes ] && exit 1
	apt_update
	"${APT[@]}" install --no-install-recommends "${to_install[@]}" </dev/null
fi

mapfile -t still < <(missing_packages)
if [ ${#still[@]} -gt 0 ]; then
	say "still missing after apt-get install: ${still[*]}"
	exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
	say "installed: ${missing[*]}"
else
	say "all ${#PACKAGES[@]} packages are installed"
fi
