#!/usr/bin/env bash
# Installs Debian's chromium (the browser of the HTML report's tests) when
# /usr/bin/chromium is absent. Needs root and the Debian package registry.
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
echo "trunchbull: installing chromium for the browser tests (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq chromium >&2
