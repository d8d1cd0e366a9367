"""litellm's logging worker must keep up with the calls the client has in flight (otherwise its queue, which holds
every finished call's request and response, grows with the run)."""

from __future__ import annotations

from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

from judge.llm.client import DecisionClient
from judge.settings import ModelSettings


def test_the_logging_worker_may_run_a_few_handlers_per_call_in_flight():
    before = GLOBAL_LOGGING_WORKER.concurrency
    try:
        GLOBAL_LOGGING_WORKER.concurrency = 100  # litellm's default
        DecisionClient(ModelSettings("openai/fake", "http://127.0.0.1:9/v1", "x"), None, concurrency=8)
        assert GLOBAL_LOGGING_WORKER.concurrency == 100  # already enough: never lowered
        DecisionClient(ModelSettings("openai/fake", "http://127.0.0.1:9/v1", "x"), None, concurrency=256)
        assert GLOBAL_LOGGING_WORKER.concurrency >= 4 * 256
    finally:
        GLOBAL_LOGGING_WORKER.concurrency = before
