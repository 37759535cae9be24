#!/usr/bin/env bash
# Installs the Debian packages the tests use, where they are missing and this
# machine can install them (root with apt-get): busybox, so the pod-behaviour
# tests run the real container script (they fall back to /bin/sh without it),
# and chromium, which renders the HTML report in its test. Elsewhere it says
# what is missing; the tests that need it skip and say so.
set -uo pipefail
missing=()
command -v busybox >/dev/null 2>&1 || missing+=(busybox)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "installing ${missing[*]} (Debian packages)"
	if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null 2>&1; then
		echo "note: could not install ${missing[*]}: apt-get install ${missing[*]} by hand; the tests that need them say so and skip"
	fi
else
	echo "note: ${missing[*]} missing (install them with: sudo apt-get install ${missing[*]}); the tests that need them say so and skip"
fi
exit 0
