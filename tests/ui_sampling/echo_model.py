"""A sampling command for the tests: reads the ``sampling/createMessage`` params on stdin.

    echo_model.py [--plain | --fail] [--keep FILE]

Answers with ``{"content": text, "model": "echo-model"}`` where the text is "echo: " and the last
user text; ``--plain`` writes the text alone; ``--fail`` writes to stderr and exits 3; ``--keep``
saves the params it read to FILE, for the test to see what the command was given.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--plain", action="store_true")
parser.add_argument("--fail", action="store_true")
parser.add_argument("--keep", default=None)
options = parser.parse_args()
params = json.load(sys.stdin)
if options.keep:
    Path(options.keep).write_text(json.dumps(params))
if options.fail:
    print("echo_model: out of ideas", file=sys.stderr)
    sys.exit(3)
last = next(m for m in reversed(params["messages"]) if m["role"] == "user")
text = "echo: " + last["content"]["text"]
if options.plain:
    print(text)
else:
    print(json.dumps({"content": {"type": "text", "text": text}, "model": "echo-model", "stopReason": "endTurn"}))
