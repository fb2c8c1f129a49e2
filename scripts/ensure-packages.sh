#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are not installed yet.
# As root it uses apt-get (retrying once: Debian's Fast DDS packages have been seen to fail a
# first download); otherwise it names what is missing and fails.
set -euo pipefail
missing=()
for p in "$@"; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "missing Debian packages: ${missing[*]} (run as root, or: apt-get install ${missing[*]})" >&2
    exit 1
fi
echo "installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null || apt-get install -y -qq "${missing[@]}" >/dev/null
