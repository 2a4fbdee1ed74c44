"""``Calls``: one worker asks another to do something and gets its answer, on both backends;
a worker that is gone is known at once, and a handler's error comes back as its message."""

from __future__ import annotations

from typing import Any

import pytest
from _state_backends import Backend

from backchannel.state.calls import CallFailed, Calls, WorkerGone
from backchannel.testing import run
from backchannel.types.errors import InvalidParams


def test_a_call_reaches_the_named_worker_and_brings_its_answer_back(backend: Backend) -> None:
    async def body() -> None:
        first, second = backend.new(), backend.new()
        await first.start()
        await second.start()
        asking, answering = Calls(first), Calls(second)
        seen: list[Any] = []

        async def double(args: Any) -> Any:
            seen.append(args)
            if args == "bad":
                raise InvalidParams("bad is not a number")
            return {"twice": args * 2, "by": second.worker_id}

        answering.handle("double", double)
        await asking.start()
        await answering.start()
        try:
            assert await asking.call(second.worker_id, "double", 21) == {"twice": 42, "by": second.worker_id}
            with pytest.raises(CallFailed, match="bad is not a number"):
                await asking.call(second.worker_id, "double", "bad")
            with pytest.raises(CallFailed, match="does not handle 'triple'"):
                await asking.call(second.worker_id, "triple", 1)
            assert seen == [21, "bad"]
            answering.stop()
            await second.aclose()
            with pytest.raises(WorkerGone):  # nobody listens on its channel: known at once
                await asking.call(second.worker_id, "double", 1, timeout=30)
        finally:
            asking.stop()
            answering.stop()
            await first.aclose()
            await second.aclose()

    run(body)
