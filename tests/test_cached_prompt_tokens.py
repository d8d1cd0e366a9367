"""Prompt caching is reported: the prompt tokens a provider served from its cache (llama.cpp's reused KV state,
vLLM's and OpenAI's prefix caches) are summed in `run-summary.json` and shown on the console, so a user sees what
putting the document before the sentence earns."""

from __future__ import annotations

import json
from types import SimpleNamespace

from judge.llm.pricing import cached_prompt_tokens
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder
from tests.test_eval_e2e import eval_args, run_cli


def test_eval_sums_the_cached_prompt_tokens_the_server_reports(tmp_path):
    with FakeEndpoint(smart_responder, prefix_cache=True) as ep:
        result = run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out"))
        reported = ep.cached_tokens_reported
    usage = json.loads((tmp_path / "out" / "run-summary.json").read_text(encoding="utf-8"))["usage"]
    # every decision after the first of its kind shares at least its system prompt with an earlier one
    assert 0 < reported < usage["prompt_tokens"]
    assert usage["cached_prompt_tokens"] == reported
    assert f"in ({reported} cached) /" in " ".join(result.output.split())


def test_a_server_without_prompt_caching_reports_none(tmp_path):
    with FakeEndpoint(smart_responder) as ep:
        result = run_cli(eval_args(ep, tmp_path / "cache", tmp_path / "out"))
    usage = json.loads((tmp_path / "out" / "run-summary.json").read_text(encoding="utf-8"))["usage"]
    assert usage["cached_prompt_tokens"] == 0 and usage["prompt_tokens"] > 0
    assert " in (" not in " ".join(result.output.split())  # the tokens part of the decisions line


def test_cached_prompt_tokens_reads_every_shape_litellm_gives():
    from litellm.types.utils import PromptTokensDetailsWrapper, Usage

    embedded = Usage(prompt_tokens=900, completion_tokens=12, total_tokens=912,
                     prompt_tokens_details=PromptTokensDetailsWrapper(cached_tokens=640))
    assert cached_prompt_tokens(embedded) == 640
    assert cached_prompt_tokens(SimpleNamespace(prompt_tokens_details={"cached_tokens": 7})) == 7
    assert cached_prompt_tokens(SimpleNamespace(prompt_tokens_details=None)) == 0
    assert cached_prompt_tokens(Usage(prompt_tokens=5, completion_tokens=1, total_tokens=6)) == 0
    assert cached_prompt_tokens(None) == 0
