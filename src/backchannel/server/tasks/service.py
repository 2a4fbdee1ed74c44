"""``server.tasks``: which calls become tasks, who owns them, and where a task's commands go.

Per revision (each spec's own rules):

- **2025-11-25** (tasks.mdx, experimental): the server declares ``tasks`` in ``initialize``
  and each tool's ``execution.taskSupport``; the *client* asks for a task with
  ``params.task`` (``{"ttl": ms}``). A required-task tool called without it, or a task asked
  of a tool that has none, is -32601.
- **2026-07-28** (SEP-2663): the server declares the ``io.modelcontextprotocol/tasks``
  extension in ``server/discover``; a client that carries it in the request's
  ``clientCapabilities`` may get a task, and the *server* decides: a task-capable tool always
  becomes one then. Without it, a required-task tool is -32021 naming the extension, and so
  is every ``tasks/*`` request.

A task belongs to its caller (``owner``): the authenticated principal; without one, the
handshake-era session, or the stdio connection; an anonymous stateless-era HTTP caller owns
its tasks by their unguessable ids alone. It counts against a budget (``budget``): the
principal's or the connection's, and an anonymous HTTP caller's address (both eras). Settings
come from ``TaskOptions`` (``Server(task_ttl_max=...)``) and stay attributes: ``ttl`` (seconds a
task is kept when the client names none; 1 hour), ``max_ttl`` (the most a client may ask; 1
hour), ``poll_interval`` (what clients are told, 0.5 s), ``limit`` (tasks per caller, 1,000),
``anonymous_limit`` (per address of anonymous HTTP callers, 100) and ``limit_total`` (all
callers together, 20,000).
"""

from __future__ import annotations

__all__ = ["TaskServer", "TaskService"]

import asyncio
import contextlib
import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from ...protocol.events import RequestReceived
from ...runtime.caller_address import address_budget, caller_address
from ...state.shared import SharedState
from ...types.capabilities import extension_settings, require_extension
from ...types.errors import INTERNAL_ERROR, InvalidParams, MethodNotFound
from ...types.methods import METHODS
from ...types.tasks import TASKS_EXTENSION
from ..tools import RegisteredTool

if TYPE_CHECKING:
    from ...runtime.connection import Connection
    from ..context import Context
    from ..options import ServerOptions
    from ..registry import Registry
    from ..state import StateStore
    from ..subscriptions import Subscriptions
    from .records import TaskRecord
    from .relay import TaskRelay
    from .runner import TaskRunner
    from .store import Budget, TaskStore

#: Revisions whose core protocol has tasks (2025-11-25).
CORE_TASK_VERSIONS = METHODS["tasks/get"].versions
_LOCAL_WORKER = "local"
_LISTED_PER_OWNER = 1000
_LISTED_OWNERS = 10_000
_FOLLOWED_PER_STREAM = 100


def status_channel(task_id: str) -> str:
    return f"task:{task_id}"


def _nothing() -> None:
    return None


class TaskServer(Protocol):
    """What the tasks need of ``Server``, which meets it (this module imports no ``server.py``)."""

    @property
    def clock(self) -> Callable[[], float] | None: ...
    @property
    def options(self) -> ServerOptions: ...
    @property
    def state(self) -> StateStore: ...
    @property
    def registry(self) -> Registry: ...
    @property
    def subscriptions(self) -> Subscriptions: ...

    def connection_scope(self, connection: Connection) -> str | None: ...
    def mounts_offer_tasks(self) -> bool: ...


class TaskService:
    """The server's tasks (see the module)."""

    def __init__(self, server: TaskServer) -> None:
        self.server = server
        self.clock = time.time if server.clock is None else server.clock
        options = server.options.tasks
        self.ttl = options.ttl
        self.max_ttl = options.ttl_max
        self.poll_interval = options.poll_interval
        #: Tasks one caller may hold (a principal, a stdio connection), running or finished and not expired.
        self.limit = options.limit
        #: Tasks the anonymous HTTP callers of one address may hold together (an IPv6 address by its /64).
        self.anonymous_limit = options.anonymous_limit
        self._limit_total = options.limit_total
        #: Tasks running in this process, by id.
        self.running: dict[str, TaskRunner] = {}
        #: (task id, key) of the questions a ``tasks/result`` here is putting to its client now.
        self.relayed: set[tuple[str, str]] = set()
        self._listed: dict[str, list[tuple[str, float]]] = {}  # owner -> (task id, expiry), oldest first

    # The store, the relay and the runner load with the first task: a server whose tools are never
    # tasks does without them (0.1 MiB and a dataclass of every start: ``docs/performance.md``).

    @functools.cached_property
    def store(self) -> TaskStore:
        """Where task records are kept: the server's state, made on first use."""
        from .store import TaskStore

        return TaskStore(lambda: self.server.state, self.clock, limit_total=self._limit_total)

    @functools.cached_property
    def relay(self) -> TaskRelay:
        """What carries ``tasks/update`` and ``tasks/cancel`` to the worker running a task, made on first use."""
        from .relay import TaskRelay

        return TaskRelay(self)

    @property
    def limit_total(self) -> int:
        """How many tasks all callers together may hold (running or finished and not yet expired)."""
        return self._limit_total

    @limit_total.setter
    def limit_total(self, value: int) -> None:
        self._limit_total = value
        if "store" in self.__dict__:  # (made already: it reads the bound from here no more)
            self.store.limit_total = value

    @property
    def shared(self) -> SharedState | None:
        """The fleet's state, when tasks may run on other workers."""
        state = self.server.state
        return state if isinstance(state, SharedState) and state.spans_workers else None

    @property
    def worker_id(self) -> str:
        """This worker's id in a fleet's shared state, or a fixed local id for a server alone."""
        state = self.shared
        return state.worker_id if state is not None else _LOCAL_WORKER

    # ------------------------------------------------------------ negotiation

    def offered(self) -> bool:
        """Whether any registered tool can run as a task, or a mount's, and so whether the server declares tasks."""
        return any(tool.task is not None for tool in self.server.registry.tools.values()) or (
            self.server.mounts_offer_tasks()
        )

    def declare(self, capabilities: dict[str, Any], request: RequestReceived) -> dict[str, Any]:
        """``capabilities`` with what this server offers of tasks in ``request``'s revision."""
        if not self.offered():
            return capabilities
        if request.era == "stateless":
            capabilities["extensions"] = {**capabilities.get("extensions", {}), TASKS_EXTENSION: {}}
        elif request.version in CORE_TASK_VERSIONS:
            tasks: dict[str, Any] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
            if self.shared is None:  # listing needs every task of a caller in one place
                tasks["list"] = {}
            capabilities["tasks"] = tasks
        return capabilities

    def require_extension(self, request: RequestReceived) -> None:
        """Raise ``MissingCapability`` (-32021) when a stateless-era ``request`` comes from a client without the
        tasks extension."""
        if request.era == "stateless":
            require_extension(request.client_capabilities, TASKS_EXTENSION)

    def wanted(self, tool: RegisteredTool, request: RequestReceived) -> bool:
        """Whether this call of a task-capable ``tool`` becomes a task; raises when it must be
        one and cannot (the client did not declare tasks, or did not ask for one)."""
        if request.era == "stateless":
            if extension_settings(request.client_capabilities, TASKS_EXTENSION) is not None:
                return True
            if tool.task == "required":
                require_extension(request.client_capabilities, TASKS_EXTENSION)  # -32021 naming it
            return False
        if isinstance(request.params.get("task"), dict) and request.version in CORE_TASK_VERSIONS:
            return True
        if tool.task == "required":
            raise MethodNotFound(f"Tool {tool.name!r} runs only as a task: call it with params.task (tasks.mdx)")
        return False

    def refuse_task_param(self, request: RequestReceived) -> None:
        """A 2025-11-25 task asked of a tool without task support: -32601 (tasks.mdx §Tool-Level
        Negotiation), when this server declares tasks at all (else the param is ignored)."""
        if request.version in CORE_TASK_VERSIONS and self.offered():
            raise MethodNotFound(f"Tool {request.params.get('name')!r} does not run as a task")

    # ------------------------------------------------------------ owners

    def owner(self, context: Context) -> str:
        """Who a task belongs to (see the module): one fixed-shape scope name."""
        principal = context.principal
        if principal is not None:
            return "principal:" + _hash(str(principal))
        transport = context.connection.transport
        session_id = getattr(transport, "session_id", None)
        if context.era == "handshake" and isinstance(session_id, str):
            return "session:" + _hash(session_id)
        if getattr(transport, "authenticates_callers", False):
            return "anonymous"
        return self.server.connection_scope(context.connection) or "anonymous"

    def budget(self, context: Context) -> Budget:
        """Whose budget a new task counts against: the principal's; an anonymous HTTP caller's
        address (both eras: the tasks of every anonymous session from one address count together,
        so opening sessions buys no more); else the connection's (stdio, memory)."""
        from .store import Budget

        principal = context.principal
        if principal is not None:
            return Budget("principal:" + _hash(str(principal)), self.limit, "this caller")
        transport = context.connection.transport
        if not getattr(transport, "authenticates_callers", False):
            return Budget(self.server.connection_scope(context.connection) or "anonymous", self.limit, "this caller")
        address = caller_address()
        if address is None:  # (an ASGI server that names no client: every anonymous caller together)
            return Budget("anonymous", self.anonymous_limit, "anonymous callers")
        where = address_budget(address)
        return Budget("address:" + where, self.anonymous_limit, f"anonymous callers from {where}")

    # ------------------------------------------------------------ starting

    async def start(self, tool: RegisteredTool, kwargs: dict[str, Any], context: Context) -> Any:
        """Run ``tool`` as a task: the ``CreateTaskResult`` once the task is stored. A tool
        registered with ``task_start="explicit"`` runs as the request until its body calls
        ``ctx.start_task()``; if it returns (or asks, or fails) before that, its outcome is the
        request's: the value returned here, or the exception raised."""
        from .records import TaskRecord, new_task_id
        from .runner import TaskRunner

        request = context.request
        now = self.clock()
        record = TaskRecord(
            task_id=new_task_id(),
            owner=self.owner(context),
            era=request.era,
            worker=self.worker_id,
            created=now,
            ttl=self._ttl(request),
            poll_interval=self.poll_interval,
        )
        runner = TaskRunner(self, record, context, tool, self.budget(context))
        context.task = runner
        if tool.task_start == "call":
            await runner.begin()
        body = runner.launch(kwargs)
        if not runner.begun:
            try:
                await asyncio.wait({body, runner.created}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                body.cancel()  # the request was cancelled before the task began
                raise
            if not runner.begun:
                context.task = None
                return await body
        return runner.record.create_result(request.era)

    def _ttl(self, request: RequestReceived) -> float:
        """The task's TTL: what the client asked, cut to ``max_ttl`` (2025-11-25 tasks.mdx: a
        receiver MAY override the requested ``ttl`` and MUST report the actual one), else ``ttl``."""
        asked = request.params.get("task")
        ttl = asked.get("ttl") if isinstance(asked, dict) and request.era == "handshake" else None
        if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl > 0:
            return min(ttl / 1000, self.max_ttl)
        return min(self.ttl, self.max_ttl)

    async def keep(self, runner: TaskRunner) -> None:
        """Store a new task (``TaskRunner.begin``); its commands can reach this worker first."""
        state = self.shared
        if state is not None:
            await self.relay.ready(state)
        record = runner.record
        self.running[record.task_id] = runner
        try:
            await self.store.create(record, runner.budget)
        except BaseException:
            self.running.pop(record.task_id, None)
            raise
        if state is None:
            self._list(record)

    def _list(self, record: TaskRecord) -> None:
        """Remember a task for ``tasks/list``: its owner's newest, while not expired; the owners
        who listed least recently are forgotten first past ``_LISTED_OWNERS``."""
        listed = self._listed.pop(record.owner, [])
        self._listed[record.owner] = listed  # the newest owner last
        now = self.clock()
        listed[:] = [entry for entry in listed[-_LISTED_PER_OWNER + 1 :] if entry[1] > now]
        listed.append((record.task_id, record.expires))
        while len(self._listed) > _LISTED_OWNERS:
            del self._listed[next(iter(self._listed))]

    def release(self, runner: TaskRunner) -> None:
        """Forget ``runner`` once its task has ended; a newer runner with the same id stays."""
        if self.running.get(runner.record.task_id) is runner:
            del self.running[runner.record.task_id]

    # ------------------------------------------------------------ following

    async def follow(self, context: Context) -> tuple[list[str] | None, Callable[[], None]]:
        """``subscriptions/listen`` asking ``notifications.taskIds``: the ids granted (the caller's
        own, live or finished; others are left out), and what stops following them. -32021 for a
        client without the extension (SEP-2663 §Task Status Notifications)."""
        asked = context.request.params.get("notifications")
        ids = asked.get("taskIds") if isinstance(asked, dict) else None
        if ids is None:
            return None, _nothing
        self.require_extension(context.request)
        if not isinstance(ids, list) or not all(isinstance(task_id, str) for task_id in ids):
            raise InvalidParams("subscriptions/listen: notifications.taskIds must be a list of task ids")
        if len(ids) > _FOLLOWED_PER_STREAM:
            raise InvalidParams(f"subscriptions/listen: follow at most {_FOLLOWED_PER_STREAM} tasks per stream")
        granted: list[str] = []
        for task_id in dict.fromkeys(ids):
            with contextlib.suppress(InvalidParams):  # not the caller's, or gone: not granted
                await self.find(context, task_id)
                granted.append(task_id)
        state = self.shared
        if state is None or not granted:
            return granted, _nothing
        stops = [state.listen(status_channel(task_id), functools.partial(self._heard, task_id)) for task_id in granted]
        for task_id in granted:
            await state.listening(status_channel(task_id))

        def stop_following() -> None:
            for stop in stops:
                stop()

        return granted, stop_following

    def changed(self, record: TaskRecord) -> None:
        """A task's status or questions changed: ``notifications/tasks`` to the streams following it
        (in a fleet, wherever they are: one publish on the task's channel)."""
        task = record.extension_task(detailed=True)
        state = self.shared
        if state is None:
            self.server.subscriptions.task_changed(record.task_id, task)
        else:
            self.relay.announce(state, status_channel(record.task_id), task)

    def _heard(self, task_id: str, data: bytes) -> None:
        task = msgspec.json.decode(data)
        if isinstance(task, dict):
            self.server.subscriptions.task_changed(task_id, task)

    # ------------------------------------------------------------ finding

    async def find(self, context: Context, task_id: Any) -> TaskRecord:
        """The caller's task ``task_id``: -32602 when there is none (never made, another
        caller's, or expired). A live task whose worker is gone is marked failed first."""
        if not isinstance(task_id, str):
            raise InvalidParams(f"{context.request.method}: params.taskId must be a string")
        owner = self.owner(context)
        runner = self.running.get(task_id)
        if runner is not None and runner.begun and runner.record.owner == owner:
            return runner.record
        record = await self.store.load(owner, task_id)
        if record is None:
            raise InvalidParams("Failed to retrieve task: Task not found", data={"taskId": task_id})
        if not record.terminal and await self._runner_gone(record):
            await self._lost(record)
        return record

    async def listed(self, context: Context) -> list[TaskRecord]:
        """The caller's tasks, oldest first (2025-11-25 ``tasks/list``; one process only)."""
        owner = self.owner(context)
        found: list[TaskRecord] = []
        for task_id, _ in list(self._listed.get(owner, ())):
            record = await self.store.load(owner, task_id)
            if record is not None:
                found.append(record)
        return found

    async def _runner_gone(self, record: TaskRecord) -> bool:
        if record.worker == self.worker_id:
            return record.task_id not in self.running  # ours, and nothing runs it
        state = self.shared
        return state is not None and not await state.alive(record.worker)

    async def _lost(self, record: TaskRecord) -> None:
        message = f"the server worker running this task ({record.worker}) stopped before the task finished"
        record.questions.clear()
        record.error = {"code": INTERNAL_ERROR, "message": message}
        record.move("failed", self.clock(), message)
        await self.store.save(record)

    # ------------------------------------------------------------ commands

    async def deliver(self, record: TaskRecord, responses: dict[str, Any]) -> None:
        """Hand answers to the task's questions to its runner, here or on its worker."""
        runner = self.running.get(record.task_id)
        if runner is not None:
            if runner.answer(responses):
                await runner.save()
            return
        await self._command(record, {"k": "update", "t": record.task_id, "o": record.owner, "r": responses})

    async def cancel(self, record: TaskRecord) -> TaskRecord:
        """Cancel a live task; the record as it is after (cancelled, unless it ended first)."""
        runner = self.running.get(record.task_id)
        if runner is not None:
            await runner.cancel()
            return runner.record
        await self._command(record, {"k": "cancel", "t": record.task_id, "o": record.owner})
        return await self.store.load(record.owner, record.task_id) or record

    async def _command(self, record: TaskRecord, message: dict[str, Any]) -> None:
        state = self.shared
        if state is None or record.worker == self.worker_id:
            return  # no runner anywhere: find() has marked it failed, or it just ended
        if await self.relay.command(state, record.worker, message) is None:
            await self._lost(record)


def _hash(text: str) -> str:
    import hashlib  # (OpenSSL's 0.6 MiB: loaded by a first task, not at start)

    return hashlib.sha256(text.encode()).hexdigest()[:32]
