"""Logs for resumable streams, on both implementations: positions chosen by the one writer,
reads after a position from any worker, a blocking read woken by another worker's append,
a TTL renewed by each append, deletion."""

from __future__ import annotations

import asyncio
import logging

import pytest
from _state_backends import Backend

from backchannel.testing import run


def test_reads_after_a_position_see_the_writers_entries_in_order(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as writer, backend.new() as reader:
            for position in (1, 2, 3):
                writer.log_append("log:{s1}", position, f"event {position}".encode(), ttl=10)
            # the writer sees its own appends at once, queued or not
            assert await writer.log_read("log:{s1}", 0) == [(1, b"event 1"), (2, b"event 2"), (3, b"event 3")]
            await writer.flush()
            assert await reader.log_read("log:{s1}", 2) == [(3, b"event 3")]
            assert await reader.log_read("log:{s1}", 3) == []
            assert await reader.log_read("log:{s1}", -1) == await reader.log_read("log:{s1}", 0)
            assert await reader.log_read("log:{other}", 0) == []

    run(body)


def test_many_appends_arrive_whole_and_in_order(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as writer, backend.new() as reader:
            for position in range(1, 2501):  # more than one pipelined batch
                writer.log_append("big", position, position.to_bytes(2, "big"), ttl=10)
            await writer.flush()
            entries = await reader.log_read("big", 0)
            assert [position for position, _ in entries] == list(range(1, 2501))
            assert all(data == position.to_bytes(2, "big") for position, data in entries)

    run(body)


def test_a_blocking_read_is_woken_by_another_workers_append(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as writer, backend.new() as reader:
            writer.log_append("live", 1, b"first", ttl=10)
            await writer.flush()
            waiting = asyncio.create_task(reader.log_read("live", 1, wait=8))
            await asyncio.sleep(0.1)  # let the read block (if it has not, it returns the entry all the same)
            assert not waiting.done()
            writer.log_append("live", 2, b"second", ttl=10)
            # A read that timed out would return []: getting the entry proves the append woke it.
            assert await waiting == [(2, b"second")]

    run(body)


def test_a_blocking_read_with_nothing_new_returns_empty(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as reader:
            assert await reader.log_read("quiet", 0, wait=0.2) == []

    run(body)


def test_a_position_not_after_the_last_is_dropped(backend: Backend, caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        async with backend.new() as writer:
            writer.log_append("log", 1, b"a", ttl=10)
            writer.log_append("log", 2, b"b", ttl=10)
            writer.log_append("log", 2, b"again", ttl=10)
            writer.log_append("log", 1, b"back", ttl=10)
            writer.log_append("log", 3, b"c", ttl=10)
            await writer.flush()
            assert await writer.log_read("log", 0) == [(1, b"a"), (2, b"b"), (3, b"c")]

    with caplog.at_level(logging.WARNING, logger="backchannel.state"):
        run(body)
    assert caplog.text.count("append dropped") == 2


def test_a_log_lives_ttl_after_its_last_append(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as writer, backend.new() as reader:
            writer.log_append("log", 1, b"a", ttl=0.8)
            await writer.flush()
            await backend.pass_time(0.5)
            writer.log_append("log", 2, b"b", ttl=0.8)  # renews the whole log's TTL
            await writer.flush()
            await backend.pass_time(0.5)  # 1.0 s after the first append, 0.5 s after the last
            assert await reader.log_read("log", 0) == [(1, b"a"), (2, b"b")]
            await backend.pass_time(0.4)
            assert await reader.log_read("log", 0) == []

    run(body)


def test_a_deleted_log_is_gone_and_can_start_again(backend: Backend) -> None:
    async def body() -> None:
        async with backend.new() as writer, backend.new() as reader:
            writer.log_append("log", 1, b"a", ttl=10)
            writer.log_append("log", 2, b"b", ttl=10)
            await writer.log_delete("log")  # also covers appends still queued
            assert await reader.log_read("log", 0) == []
            writer.log_append("log", 1, b"new", ttl=10)
            await writer.flush()
            assert await reader.log_read("log", 0) == [(1, b"new")]

    run(body)
