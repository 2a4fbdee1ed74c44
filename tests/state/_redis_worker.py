"""A worker process holding a ``RedisState``, for the tests that kill one.

``python _redis_worker.py URL HEARTBEAT LEASE``: starts the state, listens on ``work``,
prints its worker id once the subscription is in place, then waits to be killed.
"""

from __future__ import annotations

import asyncio
import sys

from backchannel.state import RedisState


async def main(url: str, heartbeat: float, lease: float) -> None:
    state = RedisState(url, heartbeat=heartbeat, lease=lease)
    await state.start()
    state.listen("work", lambda message: None)
    await state.listening("work")
    state.log_append("log:{worker}", 1, b"written before the kill", ttl=30)
    await state.flush()
    print(state.worker_id, flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3])))
