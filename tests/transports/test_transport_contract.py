"""The transport contract keeps what every transport does (issue #28, item 5): the HTTP-only
members live on ``RoutedTransport`` and ``AuthenticatedTransport``, which the HTTP host's
transports implement, and a stdio or memory transport carries none of them."""

from __future__ import annotations

from backchannel.http_host.legacy_sse import _StreamTransport
from backchannel.http_host.sessions import _SessionTransport
from backchannel.http_host.stateless import _OneRequest
from backchannel.testing import Tap
from backchannel.transports.base import AuthenticatedTransport, RoutedTransport, Transport
from backchannel.transports.memory import MemoryTransport, memory_pair

_ROUTED = ("routes_by_request", "write_routed", "close_stream")
_AUTHENTICATED = ("authenticates_callers", "principal")


def test_the_base_transport_declares_no_http_only_member() -> None:
    for name in _ROUTED + _AUTHENTICATED:
        assert not hasattr(Transport, name), name
        assert not hasattr(MemoryTransport, name), name


def test_the_protocols_declare_them() -> None:
    assert set(_ROUTED) <= set(RoutedTransport.__annotations__) | set(vars(RoutedTransport))
    assert set(_AUTHENTICATED) <= set(AuthenticatedTransport.__annotations__)


def test_the_http_host_transports_implement_them() -> None:
    assert _SessionTransport.routes_by_request is True
    for name in _ROUTED:
        assert hasattr(_SessionTransport, name), name
    for transport in (_SessionTransport, _OneRequest, _StreamTransport):
        assert transport.authenticates_callers is True
        assert "principal" in transport.__annotations__


def test_a_tap_states_what_it_wraps() -> None:
    left, _ = memory_pair()
    tap = Tap(left)
    assert (tap.routes_by_request, tap.authenticates_callers, tap.principal) == (False, False, None)
    assert tap.close_stream(1) is False
