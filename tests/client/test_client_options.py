"""``Client``'s option groups: the flat keywords still work, a group sets several at once."""

from __future__ import annotations

import pytest

from backchannel import Client
from backchannel.client import ClientOptions, InputOptions, LogOptions, RetryOptions, TimeoutOptions
from backchannel.transports.memory import memory_pair


def test_defaults_need_no_options() -> None:
    client = Client(memory_pair()[0])
    assert client.options == ClientOptions(TimeoutOptions(), RetryOptions(), LogOptions(), InputOptions())
    assert (client.request_timeout, client.probe_timeout, client.max_input_rounds) == (60.0, 3.0, 10)


def test_a_group_sets_its_fields_and_a_flat_keyword_wins_over_it() -> None:
    client = Client(
        memory_pair()[0],
        timeouts=TimeoutOptions(request=None, probe=1.0),
        retries=RetryOptions(url_wait=5.0),
        probe_timeout=2.0,
        url_retries=7,
        sampling_tools=True,
    )
    assert client.options.timeouts == TimeoutOptions(request=None, probe=2.0)
    assert client.options.retries == RetryOptions(url_wait=5.0, url_retries=7)
    assert (client.request_timeout, client.probe_timeout, client.url_wait, client.url_retries) == (None, 2.0, 5.0, 7)
    assert client.options.inputs.sampling_tools


def test_an_unknown_keyword_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'request_timout'"):
        Client(memory_pair()[0], request_timout=1.0)  # type: ignore[call-arg]
