#!/usr/bin/env bash
# Install the real services the shared-state tests run (Debian's redis-server and nginx).
# Idempotent and quiet: does nothing when both are on PATH; tries `apt-get install` first
# and runs `apt-get update` only when the install fails without it. The tests start their
# own instances on free loopback ports (tests/_services.py), so whatever system service a
# package starts is stopped and disabled again: nothing is left running.
set -uo pipefail

have() { command -v "$1" >/dev/null 2>&1 || [[ -x "/usr/sbin/$1" ]]; }

if have redis-server && have nginx; then
  echo "services: redis-server and nginx already installed"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-services.sh: apt-get not found; install redis-server and nginx yourself" >&2
  exit 1
fi
sudo_cmd=()
if [[ "$(id -u)" != "0" ]]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo -n)
  else
    echo "install-services.sh: not root and no sudo; cannot install redis-server and nginx" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# Packages' postinst scripts must not start their daemons (policy-rc.d exit 101 = "not
# allowed"); ours is removed again afterwards unless one was there before.
policy=/usr/sbin/policy-rc.d
ours_policy=0
if [[ ! -e "$policy" ]]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null && "${sudo_cmd[@]}" chmod +x "$policy" && ours_policy=1
  trap '[[ "$ours_policy" == 1 ]] && "${sudo_cmd[@]}" rm -f "$policy"' EXIT
fi
install() { "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends redis-server nginx >/dev/null 2>&1; }
if ! install; then
  "${sudo_cmd[@]}" apt-get update -qq >/dev/null 2>&1
  install
fi
status=$?
if [[ "$ours_policy" == 1 ]]; then
  "${sudo_cmd[@]}" rm -f "$policy"
fi
for service in redis-server nginx; do
  "${sudo_cmd[@]}" service "$service" stop >/dev/null 2>&1 || true
  if command -v systemctl >/dev/null 2>&1; then
    "${sudo_cmd[@]}" systemctl disable "$service" >/dev/null 2>&1 || true
  fi
done
if [[ "$status" != 0 ]] || ! have redis-server || ! have nginx; then
  echo "install-services.sh: apt-get install redis-server nginx failed" >&2
  exit 1
fi
echo "services: $(redis-server --version | cut -d' ' -f1-3), $( (/usr/sbin/nginx -v || nginx -v) 2>&1 | head -n1) (installed)"
