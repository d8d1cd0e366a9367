"""Shared fixtures: a running FakeEndpoint (127.0.0.1 only, never the network) answering with the "smart
responder" of `judge.testing.responders`, which the benchmarks use too. Its helpers are re-exported here for the
tests that import them from conftest."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported: no price fetch
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402

from judge.testing import FakeEndpoint  # noqa: E402
from judge.testing.responders import SMART, smart_responder, tagged, user_message  # noqa: E402

__all__ = ["SMART", "endpoint", "smart_responder", "tagged", "user_message"]


@pytest.fixture
def endpoint():
    """A FakeEndpoint answering with the smart responder, zero latency; stopped after the test."""
    ep = FakeEndpoint(smart_responder)
    try:
        yield ep
    finally:
        ep.stop()


@pytest.fixture
def output_locks(monkeypatch) -> list[str]:
    """The commands that took an output lock while the test ran, in order (judge.formats.lock.output_lock, wherever
    a module imported it by name)."""
    import sys

    import judge.formats.lock as lock

    taken: list[str] = []
    real = lock.output_lock

    def counting(out, command):
        taken.append(command)
        return real(out, command)

    for module in [m for name, m in sys.modules.items() if name.startswith("judge") and m is not None]:
        if getattr(module, "output_lock", None) is real:
            monkeypatch.setattr(module, "output_lock", counting)
    return taken
