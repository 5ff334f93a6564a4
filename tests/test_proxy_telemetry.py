"""FastAPI's own OpenTelemetry: off when no provider is configured as the app is made, FastAPI's
default when one is."""

from __future__ import annotations

import pytest
from opentelemetry import trace

from collapse.app import create_app
from collapse.settings import Settings


def test_off_without_a_provider() -> None:
    app = create_app(Settings(es_url=["http://127.0.0.1:9200"]))
    assert not app._native_telemetry.enabled()
    assert (app._telemetry["tracing"], app._telemetry["metrics"], app._telemetry["logs"]) == (
        False,
        False,
        False,
    )


def test_left_to_fastapi_with_a_tracer_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    class Configured(trace.TracerProvider):
        def get_tracer(self, *args: object, **kwargs: object) -> trace.Tracer:
            return trace.NoOpTracer()

    monkeypatch.setattr(trace, "get_tracer_provider", lambda: Configured())
    app = create_app(Settings(es_url=["http://127.0.0.1:9200"]))
    assert app._telemetry["tracing"] and app._telemetry["metrics"] and app._telemetry["logs"]
