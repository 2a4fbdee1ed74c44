#!/usr/bin/env bash
# Install Debian's Chromium (and chromedriver) for the URL-elicitation browser tests
# (tests/elicitation_url/test_url_browser.py drives /usr/bin/chromium with Playwright;
# Playwright's own browser download is never used). Idempotent: does nothing when both
# are present. Needs root for apt-get; when the install is impossible it says so and
# exits 0, and the browser tests skip with that reason.
set -uo pipefail

if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]]; then
  echo "browser: $(/usr/bin/chromium --version 2>/dev/null | head -n1) (already installed)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser.sh: apt-get not found; the browser tests will be skipped" >&2
  exit 0
fi
sudo_cmd=()
if [[ "$(id -u)" != "0" ]]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo -n)
  else
    echo "install-browser.sh: not root and no sudo; the browser tests will be skipped" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if "${sudo_cmd[@]}" apt-get update -qq && "${sudo_cmd[@]}" apt-get install -y -qq chromium chromium-driver >/dev/null; then
  echo "browser: $(/usr/bin/chromium --version 2>/dev/null | head -n1) (installed)"
else
  echo "install-browser.sh: apt-get install chromium chromium-driver failed; the browser tests will be skipped" >&2
fi
exit 0
