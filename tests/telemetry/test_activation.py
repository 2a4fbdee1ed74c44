"""``telemetry.activation.signals()``: the one check a request makes (issue #20, design rule 1).

Each case runs in a fresh interpreter: the API's global providers can be set only once per process,
and the point is what the check says before and after they are.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from _subprocesses import checkout_env


def _run(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_provider_set_after_the_first_request_is_seen_by_the_next() -> None:
    said = _run(
        """
        import sys
        from backchannel.telemetry.activation import signals
        print(signals() is None, "opentelemetry" in sys.modules)         # off, and it imported nothing
        from opentelemetry import metrics, trace
        print(signals() is None)                                         # the API imported, no SDK: off
        from opentelemetry.sdk.trace import TracerProvider
        trace.set_tracer_provider(TracerProvider())
        tracer, meter = signals()
        print(tracer is not None, meter is None)                         # tracing on, metrics still off
        from opentelemetry.sdk.metrics import MeterProvider
        metrics.set_meter_provider(MeterProvider())
        tracer_again, meter = signals()
        print(tracer_again is tracer, meter is not None)                 # both on; the tracer is kept
        """
    )
    assert said == ["True", "False", "True", "True", "True", "True", "True"]


def test_a_provider_named_by_the_environment_is_loaded_on_first_use() -> None:
    said = _run(
        """
        import os
        os.environ["OTEL_PYTHON_TRACER_PROVIDER"] = "sdk_tracer_provider"
        from opentelemetry import trace
        from backchannel.telemetry.activation import signals
        found = signals()
        print(found is not None and found[0] is not None, type(trace.get_tracer_provider()).__name__)
        """
    )
    assert said == ["True", "TracerProvider"]
