#!/usr/bin/env bash
# Install Debian's Chromium and ChromeDriver for the browser tests when they are missing.
# Playwright cannot download its own browser on these machines, so the tests drive this one.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: not root or no apt-get; browser tests will be skipped (or fail under CI=true)" >&2
  exit 0
fi
echo "ensure-chromium: installing chromium and chromium-driver with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
