"""One worker of a real fleet for the tasks tests: ``_tasks_server``'s tools served on its own port,
its state in Redis (``Server.run_http(port=..., redis=...)``).

    python tests/tasks/tasks_worker.py --port P --redis URL --name NAME
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _tasks_server import Probe, tasks_server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis", required=True)
    parser.add_argument("--name", default="w")
    args = parser.parse_args()
    tasks_server(Probe(args.name)).run_http("127.0.0.1", args.port, "/mcp", redis=args.redis)


if __name__ == "__main__":
    main()
