#!/usr/bin/env bash
# Installs the Debian packages the tests use, where they are missing and this
# machine can install them (root with apt-get):
#   busybox-static  the pods' image on kubelet nodes, and the pod-behaviour tests'
#                   shell (they fall back to /bin/sh without it)
#   containerd runc the container runtime of kubelet nodes
#   chromium        renders the HTML report in its test
# Elsewhere it says what is missing; the tests that need it say so (kubelet-node
# specs fail with the install command when a package is missing, and skip only
# where the machine cannot run containers at all).
set -uo pipefail
missing=()
# Debian's "busybox" is dynamically linked: no use inside an image.
if ! command -v busybox >/dev/null 2>&1 || ldd "$(command -v busybox)" >/dev/null 2>&1; then
	missing+=(busybox-static)
fi
command -v containerd >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || missing+=(runc)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "installing ${missing[*]} (Debian packages)"
	if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null 2>&1; then
		echo "note: could not install ${missing[*]}: apt-get install ${missing[*]} by hand; the tests that need them say so"
	fi
else
	echo "note: ${missing[*]} missing (install them with: sudo apt-get install ${missing[*]}); the tests that need them say so"
fi
exit 0
