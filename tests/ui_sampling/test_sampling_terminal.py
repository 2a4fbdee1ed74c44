"""Sampling at the terminal, in a pseudo-terminal: the three ways to answer (``client/sampling.mdx``:
a human in the loop who can review, edit and deny each request, and review the reply).

1. The person is the model: the request is shown, they type the reply, or Esc refuses.
2. An endpoint (a fake OpenAI-compatible server on loopback): nothing leaves before the person
   says yes; they may edit the request and the reply; the key comes from the environment and is
   never shown.
3. A command: the same approvals around a local program.

Against server-everything's ``trigger-sampling-request`` (handshake era; its result echoes the
``CreateMessageResult`` it got on the wire, or our error) and the demo's ``haiku`` (both eras).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _fake_model import fake_chat
from _screen import CLEAR_LINE, ESC, Screen

from peers.paths import EVERYTHING_STDIO_CMD, have_npm_peers

ECHO_MODEL = f"{sys.executable} {Path(__file__).resolve().parent / 'echo_model.py'}"
EVERYTHING_PROMPT = "mcp-servers/everything>"
needs_npm = pytest.mark.skipif(not have_npm_peers(), reason="the npm test peers are not installed")
SEND = "? [Y]es / [E]dit / [N]o, refuse:"
RETURN = "Return it to the server? [Y]es / [E]dit / [N]o, refuse:"


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    opened: list[Screen] = []
    yield opened
    for screen in opened:
        screen.close()


def start(screens: list[Screen], *args: str, env: dict[str, str] | None = None) -> Screen:
    screen = Screen(*args, env=env)
    screens.append(screen)
    return screen


def everything_sample(screen: Screen, prompt: str, *, ready: bool = False) -> None:
    """Call server-everything's sampling tool; see the request it sends."""
    if not ready:
        screen.expect(EVERYTHING_PROMPT)
    screen.line(f"call trigger-sampling-request prompt={prompt}")
    screen.expect("(sampling/createMessage):")
    screen.expect("system: You are a helpful test server.")
    screen.expect(f"user: Resource trigger-sampling-request context: {prompt}")
    screen.expect("max tokens 100, temperature 0.7")


def demo_haiku(screen: Screen, topic: str) -> None:
    screen.expect("demo>")
    screen.line(f"call haiku topic={topic}")
    screen.expect("(sampling/createMessage):")
    screen.expect("system: You are a poet who answers only in haiku.")
    screen.expect(f"user: Write a haiku about {topic}.")
    screen.expect("max tokens 60, temperature 0.8")
    screen.expect("model preferences: hints claude; intelligence 0.7; speed 0.4")


# -- 1. the person is the model ---------------------------------------------------------------------


@needs_npm
def test_the_person_types_the_reply_or_refuses_everything(screens: list[Screen]) -> None:
    screen = start(screens, "connect", "--", *EVERYTHING_STDIO_CMD)
    everything_sample(screen, "ducks")
    screen.expect("You are the model: type the reply; Esc refuses.")
    screen.expect("reply>")
    screen.line("Ducks paddle in the rain.")
    screen.expect("Reply sent.")
    received = screen.expect(EVERYTHING_PROMPT)  # what server-everything received, as its tool reports it
    assert '"text": "Ducks paddle in the rain."' in received and '"model": "human"' in received
    everything_sample(screen, "geese", ready=True)
    screen.expect("reply>")
    screen.send(ESC)
    screen.expect("Sampling request refused.")
    screen.expect("MCP error -1: User rejected sampling request")  # the spec's code and words, as it got them
    screen.expect(EVERYTHING_PROMPT)


def test_the_person_types_the_reply_or_refuses_the_demo_stateless(screens: list[Screen]) -> None:
    screen = start(screens, "demo", "--era", "stateless")
    demo_haiku(screen, "rain")
    screen.expect("reply>")
    screen.line("")  # an empty reply is not sent
    screen.expect("An empty reply is not sent")
    screen.expect("reply>")
    screen.line("Rain on the tin roof")
    screen.expect("A haiku about rain, by human:")
    screen.expect("Rain on the tin roof")
    demo_haiku(screen, "fog")
    screen.expect("reply>")
    screen.send(ESC)
    screen.expect("Sampling request refused.")
    # mrtr.mdx: the server waits for nothing; the call ends here, and the person is told.
    screen.expect("the sampling request was refused, so the call ends here (the server is not asked again)")
    screen.expect("demo>")


# -- 2. an endpoint ----------------------------------------------------------------------------------


def test_an_endpoint_answers_only_what_the_person_approved(screens: list[Screen]) -> None:
    key = "sk-test-never-shown-7313"
    with fake_chat() as chat:
        options = ["--sampling-endpoint", chat.url, "--sampling-model", "fake-1", "--sampling-key-env", "FAKE_KEY"]
        screen = start(screens, "demo", "--era", "handshake", *options, env={"FAKE_KEY": key})
        demo_haiku(screen, "rain")
        screen.expect(f"Send it to the model fake-1 at {chat.url}{SEND}")
        assert chat.requests == []  # nothing leaves before the person says yes
        screen.line("e")  # edit: each text prefilled; Enter keeps it
        screen.expect("system: You are a poet who answers only in haiku.")
        screen.line()
        screen.expect("user: Write a haiku about rain.")
        screen.send(CLEAR_LINE)
        screen.line("Write a haiku about snow.")
        screen.expect("user: Write a haiku about snow.")  # shown again, as it will be sent
        screen.expect(SEND)
        assert chat.requests == []
        screen.line("y")
        screen.expect(f"the model fake-1 at {chat.url} answered (stop reason endTurn):")
        screen.expect("assistant: fake says: Write a haiku about snow.")
        screen.expect(RETURN)
        screen.line("e")
        screen.expect("reply> fake says: Write a haiku about snow.")
        screen.send(CLEAR_LINE)
        screen.line("Snow on the pines")
        screen.expect("assistant: Snow on the pines")
        screen.expect(RETURN)
        screen.line("y")
        screen.expect("Reply sent.")
        screen.expect("A haiku about rain, by fake-1-2025:")
        screen.expect("Snow on the pines")
        ((headers, body),) = chat.requests
        assert headers["authorization"] == f"Bearer {key}"
        assert body["model"] == "fake-1"
        assert body["messages"][-1] == {"role": "user", "content": "Write a haiku about snow."}
        # Refused before it leaves: the endpoint hears nothing, the server hears -1.
        demo_haiku(screen, "fog")
        screen.expect(SEND)
        screen.line("n")
        screen.expect("Sampling request refused.")
        screen.expect("No haiku: the client answered 'User rejected sampling request' (-1).")
        screen.expect("demo>")
        assert len(chat.requests) == 1
    assert key not in screen.text


# -- 3. a command ------------------------------------------------------------------------------------


@needs_npm
def test_a_command_answers_everything_once_approved(screens: list[Screen]) -> None:
    screen = start(screens, "connect", "--sampling-command", ECHO_MODEL, "--", *EVERYTHING_STDIO_CMD)
    everything_sample(screen, "ducks")
    screen.expect(f"Send it to the command {ECHO_MODEL}{SEND}")
    screen.line("y")
    screen.expect("answered (stop reason endTurn):")
    screen.expect("assistant: echo: Resource trigger-sampling-request context: ducks")
    screen.expect(RETURN)
    screen.line("y")
    received = screen.expect(EVERYTHING_PROMPT)
    assert '"text": "echo: Resource trigger-sampling-request context: ducks"' in received
    assert '"model": "echo-model"' in received
    # The reply refused: the server hears -1, not what the command wrote.
    everything_sample(screen, "geese", ready=True)
    screen.expect(SEND)
    screen.line("y")
    screen.expect(RETURN)
    screen.line("n")
    screen.expect("Sampling request refused.")
    screen.expect("MCP error -1: User rejected sampling request")
    screen.expect(EVERYTHING_PROMPT)


def test_a_command_answers_the_demo_stateless(screens: list[Screen]) -> None:
    screen = start(screens, "demo", "--era", "stateless", "--sampling-command", f"{ECHO_MODEL} --plain")
    demo_haiku(screen, "snow")
    screen.expect(SEND)
    screen.line("yes")
    screen.expect("assistant: echo: Write a haiku about snow.")
    screen.expect(RETURN)
    screen.line("y")
    screen.expect("A haiku about snow, by")
    screen.expect("echo: Write a haiku about snow.")
    screen.expect("demo>")
