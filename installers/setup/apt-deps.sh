#!/bin/sh
# Install the named Debian/Ubuntu packages that are not installed yet.
# Usage: apt-deps.sh PACKAGE...   (runs apt-get through sudo when not root)
set -eu
missing=""
for pkg in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    case "$status" in
        *" installed") ;;
        *) missing="$missing $pkg" ;;
    esac
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "InnoTune: these packages are needed but this is not a Debian/Ubuntu system:$missing" >&2
    echo "Install their equivalents with your package manager, then run this again." >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "InnoTune: need root to install:$missing (no sudo found). Install them as root, then run this again." >&2
        exit 1
    fi
fi
echo "InnoTune: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
