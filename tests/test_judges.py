"""Judges are types: `--model` / `model=` is parsed once (judge.llm.judges) into an embedded, hosted or routed judge
that knows what it can do and gives its signature fields; nothing else in the package tests the model string."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from judge.errors import SettingError
from judge.judging.signature import JudgeSignature
from judge.llm.judges import EmbeddedJudge, HostedJudge, RoutedJudge, applied_settings, judge_of, judge_type
from judge.llm.logprob import asks_logprobs
from judge.llm.pricing import Prices, price_known
from judge.settings import JudgeSettings, ModelSettings, RetryPolicy

EMBEDDED = "argue-local/qwen2.5-coder-1.5b-instruct-q4_k_m"
PACKAGE = Path(__file__).resolve().parents[1] / "judge"
# The parser, and the embedded judge's own modules (which name their provider to litellm).
PARSER = {"judge/llm/judges.py", "judge/llm/embedded/weights.py", "judge/llm/embedded/provider.py"}


def model_string_tests() -> set[str]:
    """Modules outside the parser that call an `is_embedded`-style test or compare a model id with the embedded
    provider."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        name = str(path.relative_to(PACKAGE.parent))
        if name in PARSER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = node.func if isinstance(node, ast.Call) else None
            if isinstance(called, ast.Name | ast.Attribute) and \
                    (getattr(called, "id", None) or getattr(called, "attr", None)) == "is_embedded":
                found.add(name)
            if isinstance(node, ast.Name) and node.id == "EMBEDDED_PROVIDER":
                found.add(name)
    return found


def test_no_module_but_the_parser_tests_the_model_string():
    assert model_string_tests() == set()


@pytest.mark.parametrize(("settings", "kind"), [
    (ModelSettings(EMBEDDED), EmbeddedJudge), (ModelSettings("argue-local/other"), EmbeddedJudge),
    (ModelSettings("openai/gpt-4o-mini"), HostedJudge), (ModelSettings("hosted_vllm/q", "http://127.0.0.1:9/v1"),
                                                         HostedJudge),
    (ModelSettings("openai/fake", api_bases=("http://127.0.0.1:9/v1", "http://127.0.0.1:8/v1")), RoutedJudge),
])
def test_the_model_is_parsed_into_its_type(settings, kind):
    assert type(judge_of(settings)) is kind
    assert judge_of(settings) is judge_of(settings)  # parsed once per settings


def test_each_judge_knows_what_it_can_do():
    embedded, hosted = judge_of(ModelSettings(EMBEDDED)), judge_of(ModelSettings("openai/gpt-4o-mini"))
    assert embedded.logprobs and not hosted.logprobs  # llama.cpp returns them; a hosted judge opts in
    assert judge_of(ModelSettings("openai/gpt-4o-mini", logprobs=True)).logprobs
    assert not judge_of(ModelSettings(EMBEDDED, logprobs=False)).logprobs
    assert embedded.free and not hosted.free and embedded.in_process and not hosted.in_process
    assert embedded.max_concurrency() == 1 and hosted.max_concurrency() is None
    assert price_known(EMBEDDED) and price_known("openai/gpt-4o-mini") and not price_known("openai/no-such-model")
    assert Prices(EMBEDDED).cost_of(None, 1000, 1000) == 0.0
    assert embedded.notice().startswith("embedded judge: ") and hosted.notice() is None
    assert judge_type(EMBEDDED) is EmbeddedJudge and judge_type("ollama/x") is HostedJudge


def test_a_judge_keeps_only_the_settings_it_takes_and_says_what_it_dropped():
    hosted = judge_of(ModelSettings("anthropic/claude-3-7-sonnet-20250219", threads=2, kernels="safe", seed=3,
                                    logprobs=True))
    assert (hosted.settings.threads, hosted.settings.kernels, hosted.settings.seed) == (None, "auto", None)
    assert not hosted.logprobs
    assert [note.split(" ")[0] for note in hosted.unapplied] == ["--threads", "--kernels", "--seed", "--logprobs"]
    embedded = judge_of(ModelSettings(EMBEDDED, threads=2, kernels="safe", seed=3))
    assert (embedded.settings.threads, embedded.settings.kernels, embedded.settings.seed) == (2, "safe", 3)
    assert embedded.unapplied == ()
    settings, notes = applied_settings(ModelSettings("openai/gpt-4o-mini", threads=4))
    assert settings.threads is None
    assert notes == list(judge_of(ModelSettings("openai/gpt-4o-mini", threads=4)).unapplied)
    assert judge_of(settings).unapplied == ()  # what a judge applies, it applies again unchanged


def test_the_judge_gives_its_signature_fields():
    settings = ModelSettings("anthropic/claude-3-7-sonnet-20250219", seed=3, temperature=0.5)
    signature = JudgeSignature.of(settings, RetryPolicy(), JudgeSettings(thresholds=None))
    assert (signature.model, signature.temperature, signature.seed, signature.logprobs) == \
        ("anthropic/claude-3-7-sonnet-20250219", 0.5, None, False)  # the seed Anthropic never sees is not claimed
    assert judge_of(settings).signature_fields() == {"model": settings.model, "temperature": 0.5, "seed": None,
                                                     "max_tokens": 512, "logprobs": False}
    assert asks_logprobs(ModelSettings(EMBEDDED)) and not asks_logprobs(settings)


def test_a_reasoning_effort_is_refused_for_the_embedded_judge_in_one_line():
    with pytest.raises(SettingError, match=r"^reasoning_effort='low' \(--reasoning-effort\): the embedded judge "
                                           r".* has no reasoning mode; drop it") as caught:
        judge_of(ModelSettings(EMBEDDED, reasoning_effort="low"))
    assert "\n" not in str(caught.value)
    kept = judge_of(ModelSettings(EMBEDDED, keep_reasoning=True))
    assert not kept.settings.keep_reasoning and kept.unapplied[0].startswith("--keep-reasoning has no effect")


def test_the_embedded_judge_drops_the_servers_it_does_not_talk_to():
    judge = judge_of(ModelSettings(EMBEDDED, "http://127.0.0.1:9/v1", "key"))
    assert (judge.settings.api_base, judge.settings.api_key, judge.servers()) == (None, None, [])
    assert judge.unapplied == (f"--api-base and --router have no effect: the embedded judge {EMBEDDED} runs on this "
                               "machine; ignored",)
    assert judge_of(ModelSettings(EMBEDDED, api_key="from the environment")).unapplied == ()
