#!/usr/bin/env bash
# The package as a user gets it: build the sdist and the wheel (python -m build), check them with
# twine, install the wheel in a fresh venv and run the command it brings. Run from anywhere:
#   bash tests/packaging/check.sh          (PYTHON=... to build with another interpreter)
# Needs build and twine (both in the dev extra) and the network, for the build backend (hatchling)
# and the wheel's dependencies. Everything it makes is in a temporary folder, removed at the end.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python="${PYTHON:-python}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "--- python -m build (sdist and wheel)"
"$python" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
tail -n 1 "$work/build.log"
sdists=("$work"/dist/*.tar.gz)
wheels=("$work"/dist/*.whl)
[[ ${#sdists[@]} -eq 1 && -f ${sdists[0]} && ${#wheels[@]} -eq 1 && -f ${wheels[0]} ]] || {
  echo "expected one sdist and one wheel, found: $(ls "$work/dist")"
  exit 1
}
ls -l "$work/dist" | tail -n +2

echo "--- twine check --strict"
"$python" -m twine check --strict "$work"/dist/*

echo "--- a fresh venv installs the wheel"
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check "${wheels[0]}"

# Away from the checkout, so what runs is the installed wheel, not src/.
cd "$work"
echo "--- backchannel demo --help"
"$work/venv/bin/backchannel" demo --help >"$work/demo-help.txt"
head -n 1 "$work/demo-help.txt"
echo "--- backchannel --version"
"$work/venv/bin/backchannel" --version
# One version: the wheel's metadata (from pyproject, which reads it from the package) is the
# package's own __version__, and the installed files are the wheel's, not the checkout's.
"$work/venv/bin/python" - "${wheels[0]}" <<'PY'
import importlib.metadata
import pathlib
import sys

import backchannel

installed = importlib.metadata.version("backchannel")
wheel = pathlib.Path(sys.argv[1]).name.split("-")[1]
assert backchannel.__version__ == installed == wheel, (backchannel.__version__, installed, wheel)
assert "site-packages" in backchannel.__file__, backchannel.__file__
licenses = [f for f in importlib.metadata.files("backchannel") or () if f.name == "LICENSE"]
assert licenses, "the wheel carries no LICENSE"
print(f"backchannel {installed}: __version__, the metadata and the wheel's name agree; LICENSE in the wheel")
PY
echo "packaging: ok"
