#!/usr/bin/env bash
# Install FastMCP's tasks (fastmcp-tasks, SEP-2663) into .venv-fastmcp-tasks, a venv of its own:
# fastmcp-tasks 4.1.4 pins fastmcp 4.1.4, older than the benchmarks' fastmcp in .venv.
# tests/client/tasks/test_tasks_interop_fastmcp.py runs its server from there (and skips, saying
# so, when the venv is missing). Idempotent: does nothing when the pinned version is installed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$(dirname "$here")")"
venv="$root/.venv-fastmcp-tasks"
pin="fastmcp-tasks==4.1.4"

if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c 'import fastmcp_tasks, importlib.metadata as m; assert m.version("fastmcp-tasks") == "4.1.4"' 2>/dev/null; then
  echo "fastmcp-tasks peer: up to date ($pin)"
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q "$pin"
echo "fastmcp-tasks peer: installed $pin into $venv"
