"""Where a sampling request can go besides the person: a model endpoint, or a local command.

``connect`` and ``call`` build one from their options with :func:`sampling_model`:

* ``--sampling-endpoint URL --sampling-model M [--sampling-key-env NAME]``: an
  OpenAI-compatible chat-completions URL (``.../v1/chat/completions``), the model to ask
  for, and the environment variable holding the API key (sent as ``Authorization:
  Bearer``; never printed, never read from the command line, where ``ps`` would show it);
* ``--sampling-command "CMD ARGS"``: a program (split like a shell would, not run by one)
  that reads the ``sampling/createMessage`` params as JSON on stdin and writes the result
  on stdout: a ``CreateMessageResult`` object (``role`` and ``model`` may be left out), or
  plain text, which becomes the reply. A non-zero exit status is a failure.

A model only answers; who approves what leaves and what comes back is the caller's business
(:mod:`.sampling` asks the person; ``call`` has nobody to ask).
"""

from __future__ import annotations

__all__ = ["CommandModel", "EndpointModel", "ModelFailed", "SamplingModel", "sampling_model"]

import asyncio
import contextlib
import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from .openai_chat import ChatAnswerError, chat_request, sampling_result

#: What of a failing endpoint's or command's words is shown: enough to tell why, not a page.
_SHOWN_CHARS = 300


class ModelFailed(Exception):
    """The endpoint or command gave no usable answer; the message says why, for the person."""


class SamplingModel(Protocol):
    """Answers a ``sampling/createMessage`` request with a ``CreateMessageResult`` dict."""

    #: Who answers, as the person should read it: "the model M at URL", "the command CMD".
    label: str

    async def complete(self, params: dict[str, Any]) -> dict[str, Any]:
        """The result for ``params``; raises ``ModelFailed``."""
        ...


def _shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + " ..."


class EndpointModel:
    """An OpenAI-compatible chat-completions endpoint (see :mod:`.openai_chat`)."""

    def __init__(self, url: str, model: str, key: str | None = None, *, timeout: float = 120.0) -> None:
        self.url = url
        self.model = model
        self._key = key
        self.timeout = timeout
        self.label = f"the model {model} at {url}"

    def __repr__(self) -> str:  # the key stays out of reprs, logs and tracebacks
        return f"EndpointModel({self.url!r}, {self.model!r})"

    async def complete(self, params: dict[str, Any]) -> dict[str, Any]:
        import httpx2

        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        try:
            async with httpx2.AsyncClient(timeout=self.timeout) as http:
                response = await http.post(self.url, json=chat_request(params, self.model), headers=headers)
        except httpx2.HTTPError as exc:
            raise ModelFailed(f"could not reach {self.url}: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 400:
            raise ModelFailed(f"{self.url} answered HTTP {response.status_code}: {_shown(response.text)}")
        try:
            return sampling_result(response.json(), self.model)
        except ValueError as exc:  # ChatAnswerError, or a body that is not JSON
            said = str(exc) if isinstance(exc, ChatAnswerError) else "the answer is not JSON"
            raise ModelFailed(f"{self.url}: {said}") from None


class CommandModel:
    """A local program: the request as JSON on its stdin, the result on its stdout."""

    def __init__(self, command: str, *, cwd: str | None = None) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("--sampling-command is empty: give a program (and its arguments)")
        self.cwd = cwd
        self.label = f"the command {command}"

    async def complete(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
            )
        except OSError as exc:
            raise ModelFailed(f"could not start {self.argv[0]}: {exc}") from None
        try:
            out, err = await process.communicate(json.dumps(params).encode())
        finally:
            if process.returncode is None:  # cancelled (Ctrl-C, the call's timeout): it must not run on
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if process.returncode != 0:
            said = _shown(err.decode("utf-8", "replace")) or "no error output"
            raise ModelFailed(f"{self.argv[0]} exited with status {process.returncode}: {said}")
        return self._result(out.decode("utf-8", "replace"))

    def _result(self, text: str) -> dict[str, Any]:
        if not text.strip():
            raise ModelFailed(f"{self.argv[0]} wrote nothing on stdout")
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        model = Path(self.argv[0]).name
        if not isinstance(value, dict):  # plain text (or a JSON string, number...): the reply itself
            return {"role": "assistant", "content": {"type": "text", "text": text.strip()}, "model": model}
        return {"role": "assistant", "model": model, **value}


def sampling_model(
    *,
    endpoint: str | None = None,
    model: str | None = None,
    key_env: str | None = None,
    command: str | None = None,
    environ: Mapping[str, str] = os.environ,
) -> SamplingModel | None:
    """The model the options name, or None (the person answers); ``ValueError`` saying what is wrong."""
    if endpoint is not None and command is not None:
        raise ValueError("--sampling-endpoint and --sampling-command are two answers to one question: give one")
    if command is not None:
        if model is not None or key_env is not None:
            raise ValueError("--sampling-model and --sampling-key-env go with --sampling-endpoint")
        return CommandModel(command)
    if endpoint is None:
        if model is not None or key_env is not None:
            raise ValueError("--sampling-model and --sampling-key-env need --sampling-endpoint")
        return None
    if model is None:
        raise ValueError("--sampling-endpoint needs --sampling-model: the model to ask the endpoint for")
    key = None
    if key_env is not None:
        key = environ.get(key_env)
        if not key:
            raise ValueError(f"--sampling-key-env {key_env}: the environment has no {key_env} (or it is empty)")
    return EndpointModel(endpoint, model, key)
