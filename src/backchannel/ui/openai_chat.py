"""``sampling/createMessage`` to an OpenAI-compatible chat-completions body and back, with no I/O.

The request (``messages``, ``systemPrompt``, ``maxTokens``, ``temperature``,
``stopSequences``, ``tools``, ``toolChoice``) becomes the body of ``POST
/v1/chat/completions``; the first choice of the answer becomes a ``CreateMessageResult``.
What has no counterpart (``modelPreferences``, ``includeContext``, ``metadata``) stays
behind: the person chose the model when they named the endpoint.

The mapping, both ways:

* the system prompt is the first message, role ``system``;
* text blocks join into a message's ``content``; images become ``image_url`` parts
  (a ``data:`` URL), WAV and MP3 audio ``input_audio`` parts;
* an assistant's ``tool_use`` blocks are its ``tool_calls`` (``arguments`` as JSON text),
  and each ``tool_result`` is a ``tool`` message for its ``tool_call_id``;
* ``finish_reason`` ``stop`` / ``length`` / ``tool_calls`` are ``endTurn`` / ``maxTokens``
  / ``toolUse``; another value is passed on as it came.
"""

from __future__ import annotations

__all__ = ["ChatAnswerError", "chat_request", "sampling_result"]

import json
from typing import Any

_STOP_REASONS = {"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse", "function_call": "toolUse"}
_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


class ChatAnswerError(ValueError):
    """The endpoint's answer is not a chat completion we can read (the message says why)."""


def _blocks(content: Any) -> list[dict[str, Any]]:
    items = content if isinstance(content, list) else [content]
    return [item for item in items if isinstance(item, dict)]


def _text_of(blocks: list[dict[str, Any]]) -> str:
    return "\n".join(str(block.get("text", "")) for block in blocks if block.get("type") == "text")


def _part(block: dict[str, Any]) -> dict[str, Any] | None:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": f"data:{block.get('mimeType')};base64,{block.get('data')}"}}
    if kind == "audio":
        audio_format = _AUDIO_FORMATS.get(str(block.get("mimeType", "")).lower(), "wav")
        return {"type": "input_audio", "input_audio": {"data": block.get("data"), "format": audio_format}}
    return None


def _message(role: str, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One sampling message as chat messages (tool results are a message each)."""
    results = [block for block in blocks if block.get("type") == "tool_result"]
    if results:
        return [
            {"role": "tool", "tool_call_id": block.get("toolUseId"), "content": _text_of(_blocks(block.get("content")))}
            for block in results
        ]
    parts = [part for part in map(_part, blocks) if part is not None]
    # Plain text stays a string: the form every compatible server understands.
    content: Any = _text_of(blocks) if all(part["type"] == "text" for part in parts) else parts
    message: dict[str, Any] = {"role": role, "content": content}
    uses = [block for block in blocks if block.get("type") == "tool_use"]
    if uses:
        message["content"] = content or None
        message["tool_calls"] = [
            {
                "id": block.get("id"),
                "type": "function",
                "function": {"name": block.get("name"), "arguments": json.dumps(block.get("input") or {})},
            }
            for block in uses
        ]
    return [message]


def chat_request(params: dict[str, Any], model: str) -> dict[str, Any]:
    """The chat-completions body for ``params`` (a ``sampling/createMessage`` request's)."""
    messages: list[dict[str, Any]] = []
    if params.get("systemPrompt"):
        messages.append({"role": "system", "content": str(params["systemPrompt"])})
    for message in params.get("messages") or []:
        messages.extend(_message(str(message.get("role")), _blocks(message.get("content"))))
    body: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": params.get("maxTokens")}
    if params.get("temperature") is not None:
        body["temperature"] = params["temperature"]
    if params.get("stopSequences"):
        body["stop"] = list(params["stopSequences"])
    tools = params.get("tools") or []
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.get("name"),
                    "description": tool.get("description") or "",
                    "parameters": tool.get("inputSchema") or {"type": "object"},
                },
            }
            for tool in tools
        ]
        mode = (params.get("toolChoice") or {}).get("mode")
        if mode in ("auto", "required", "none"):
            body["tool_choice"] = mode
    return body


def sampling_result(answer: Any, model: str) -> dict[str, Any]:
    """The ``CreateMessageResult`` in a chat-completions answer; ``ChatAnswerError`` when there is none."""
    try:
        choice = answer["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise ChatAnswerError("the answer has no choices[0].message") from None
    content: list[dict[str, Any]] = []
    text = message.get("content")
    if isinstance(text, str) and text:
        content.append({"type": "text", "text": text})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            raise ChatAnswerError(f"the arguments of tool call {call.get('id')!r} are not JSON") from None
        if not isinstance(arguments, dict):
            raise ChatAnswerError(f"the arguments of tool call {call.get('id')!r} are not a JSON object")
        content.append(
            {"type": "tool_use", "id": str(call.get("id")), "name": function.get("name"), "input": arguments}
        )
    if not content:
        raise ChatAnswerError("the answer's message has neither text nor tool calls")
    finish = choice.get("finish_reason")
    result: dict[str, Any] = {
        "role": "assistant",
        "content": content[0] if len(content) == 1 else content,
        "model": str(answer.get("model") or model),
    }
    if isinstance(finish, str):
        result["stopReason"] = _STOP_REASONS.get(finish, finish)
    return result
