"""The Python API (judge.api, exported lazily from `judge`): its docstring examples run as doctests, in a folder
laid out as after the README's first command (examples/ and argue-out/), with the fake endpoint as the judge."""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import judge
from judge import api
from judge.settings import JudgeSettings, PassagePolicy
from judge.testing import FakeEndpoint
from judge.testing.responders import smart_responder

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def readme_folder(tmp_path, monkeypatch):
    """tmp_path holding examples/ (a link to the bundled one) and argue-out/ (an eval of it), as cwd."""
    (tmp_path / "examples").symlink_to(EXAMPLES, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    with FakeEndpoint(smart_responder) as model:
        api.evaluate("examples/reports", requests="examples/requests.jsonl", docs="examples/docs.jsonl",
                     nuggets="examples/nuggets", model="openai/fake", api_base=model.api_base, api_key="none",
                     cache=None, out="argue-out")
    return tmp_path


def test_every_docstring_example_of_the_api_runs(readme_folder):
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(api) if t.examples]
    names = {t.name.rsplit(".", 1)[-1] for t in tests}
    assert names >= {"evaluate", "score", "calibrate", "read_judgments", "write_judgments"}
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed (output above)"
    assert result.attempted >= 20


def test_the_api_is_judge_s_top_level_and_loads_on_first_use():
    assert set(judge.__all__) >= {"evaluate", "score", "calibrate", "read_judgments", "write_judgments"}
    assert judge.score is api.score and judge.evaluate is api.evaluate
    with pytest.raises(AttributeError, match="no attribute 'scores'"):
        judge.scores  # noqa: B018  (a typo must not pass silently)
    # `import judge` and `judge.__version__` load no model client; nor do score and the judgments format.
    code = ("import sys, judge; judge.__version__; assert 'judge.api' not in sys.modules; "
            "judge.score; judge.read_judgments; "
            "print(sorted(m for m in ('litellm', 'instructor', 'judge.llm.client') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == "[]"


def test_api_paths_and_records_score_alike(readme_folder):
    from_file = api.score("argue-out/judgments.jsonl", nuggets="examples/nuggets")
    from_records = api.score(api.read_judgments("argue-out/judgments.jsonl"), nuggets=["examples/nuggets"])
    assert from_file.scores.rows() == from_records.scores.rows()
    assert from_file.signature == from_records.signature


def test_calibrate_without_data_is_one_clear_error():
    from judge.errors import InputError

    with pytest.raises(InputError, match="nothing to calibrate"):
        api.calibrate(cache=None)


class _Captured(Exception):
    pass


def _capture(configs: dict, name: str):
    """A stand-in for the run that records the config it is handed and stops before any model call."""
    def stand_in(_items, config, *args, **kwargs):
        configs[name] = config
        raise _Captured
    return stand_in


# The same run asked for both ways: eval's options, and the API's arguments that mean the same.
EVAL_DEFAULTS = ([], {}, None)
EVAL_CHOSEN = (
    ["--model", "openai/fake", "--api-base", "http://127.0.0.1:9/v1", "--api-key", "none", "--temperature", "0.5",
     "--seed", "7", "--max-tokens", "300", "--timeout", "30", "--threads", "1", "--kernels", "safe",
     "--citation-policy", "any", "--no-truncate", "--max-doc-chars", "4000", "--on-injection", "flag",
     "--injection-detector", "rules", "--concurrency", "2"],
    dict(model="openai/fake", api_base="http://127.0.0.1:9/v1", api_key="none", temperature=0.5, seed=7,
         max_tokens=300, timeout=30.0, threads=1, kernels="safe", concurrency=2),
    JudgeSettings(policy="any", truncate=False, passages=PassagePolicy(max_chars=4000), on_injection="flag",
                  injection_detector="rules"),
)


@pytest.mark.parametrize(("options", "arguments", "judging"), [EVAL_DEFAULTS, EVAL_CHOSEN],
                         ids=["defaults", "chosen"])
def test_the_api_and_eval_build_equal_configs(tmp_path, monkeypatch, options, arguments, judging):
    """`judge.evaluate(...)` and `argue-judge eval` with the same inputs and choices judge with equal configs
    (model, sampling, thresholds, prompts, passages, injection policy, cache, concurrency, retry policy, budget):
    both build an EvalRequest that judge.api.evaluate_with runs, and a field set on one path only would break the
    equality."""
    from typer.testing import CliRunner

    import judge.run.evaluate as run_evaluate
    from judge.cli.app import app

    configs: dict = {}
    monkeypatch.setattr(run_evaluate, "evaluate_async", _capture(configs, "cli"))
    inputs = ["--requests", str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl"),
              "--nuggets", str(EXAMPLES / "nuggets")]
    result = CliRunner().invoke(app, ["eval", str(EXAMPLES / "reports"), *inputs, *options, "--cache-dir",
                                      str(tmp_path / "cache"), "--out", str(tmp_path / "out")])
    assert isinstance(result.exception, _Captured), result.output
    monkeypatch.setattr(run_evaluate, "evaluate_async", _capture(configs, "api"))
    with pytest.raises(_Captured):
        api.evaluate(EXAMPLES / "reports", requests=EXAMPLES / "requests.jsonl", docs=EXAMPLES / "docs.jsonl",
                     nuggets=EXAMPLES / "nuggets", cache=tmp_path / "cache", judge=judging, **arguments)
    assert configs["api"] == configs["cli"]
    assert configs["cli"].concurrency == arguments.get("concurrency", 4)  # the options did reach the config


CALIBRATE_DEFAULTS = ([], {}, None)
CALIBRATE_CHOSEN = (
    ["--model", "openai/fake", "--api-base", "http://127.0.0.1:9/v1", "--api-key", "none", "--max-tokens", "300",
     "--threads", "1", "--kernels", "safe", "--max-doc-chars", "4000", "--on-injection", "flag",
     "--injection-detector", "rules", "--concurrency", "2", "--n-boot", "50", "--seed", "3", "--sample", "2"],
    dict(model="openai/fake", api_base="http://127.0.0.1:9/v1", api_key="none", max_tokens=300, threads=1,
         kernels="safe", concurrency=2, n_boot=50, seed=3, sample="2"),
    JudgeSettings(passages=PassagePolicy(max_chars=4000), on_injection="flag", injection_detector="rules"),
)


@pytest.mark.parametrize(("options", "arguments", "judging"), [CALIBRATE_DEFAULTS, CALIBRATE_CHOSEN],
                         ids=["defaults", "chosen"])
def test_the_api_and_calibrate_build_equal_configs(tmp_path, monkeypatch, options, arguments, judging):
    """`judge.calibrate(...)` and `argue-judge calibrate` on the same data with the same choices calibrate with equal
    configs (model, thresholds, passages, injection policy, sample, seed, bootstrap, concurrency) and a decision
    cache in the same place: both build it with judge.api.calibration_config."""
    from typer.testing import CliRunner

    import judge.calibration.suite as suite
    import judge.cli.calibrate as calibrate_cli
    from judge.cli.app import app

    configs: dict = {}
    monkeypatch.setattr(calibrate_cli, "calibrate", _capture(configs, "cli"))
    monkeypatch.setattr(suite, "calibrate", _capture(configs, "api"))
    cache = tmp_path / "cache"
    result = CliRunner().invoke(app, ["calibrate", "--nuggets", str(EXAMPLES / "nuggets"), "--docs",
                                      str(EXAMPLES / "docs.jsonl"), *options, "--cache-dir", str(cache),
                                      "--out", str(tmp_path / "out")])
    assert isinstance(result.exception, _Captured), result.output
    with pytest.raises(_Captured):
        api.calibrate(nuggets=EXAMPLES / "nuggets", docs=EXAMPLES / "docs.jsonl", cache=cache, judge=judging,
                      **arguments)
    cli, called = configs["cli"], configs["api"]
    assert called.cache.location == cli.cache.location  # two handles on the one cache directory
    assert replace(called, cache=None) == replace(cli, cache=None)
    assert cli.n_boot == arguments.get("n_boot", 1000)  # the options did reach the config


@pytest.mark.parametrize("partial", ["strict", "exclude", "separate"])
def test_the_api_and_calibrate_read_wice_partial_alike(tmp_path, monkeypatch, partial):
    """--wice-partial and `wice_partial=` reach the same config (the policy for WiCE's partially_supported)."""
    from typer.testing import CliRunner

    import judge.calibration.suite as suite
    import judge.cli.calibrate as calibrate_cli
    from judge.cli.app import app

    wice = tmp_path / "wice.jsonl"
    claims = [("supported", "The port doubled its traffic."), ("partially_supported", "The port doubled and grew.")]
    wice.write_text("".join(json.dumps({"id": f"w{k}", "label": label, "claim": claim, "supporting_sentences": [[0]],
                                        "evidence": ["The port doubled its traffic in 2020."]}) + "\n"
                            for k, (label, claim) in enumerate(claims)), encoding="utf-8")
    configs: dict = {}
    monkeypatch.setattr(calibrate_cli, "calibrate", _capture(configs, "cli"))
    monkeypatch.setattr(suite, "calibrate", _capture(configs, "api"))
    result = CliRunner().invoke(app, ["calibrate", "--wice", str(wice), "--wice-partial", partial, "--cache-dir",
                                      str(tmp_path / "cache"), "--out", str(tmp_path / "out")])
    assert isinstance(result.exception, _Captured), result.output
    with pytest.raises(_Captured):
        api.calibrate(wice=wice, wice_partial=partial, cache=tmp_path / "cache")
    assert configs["api"].wice_partial == configs["cli"].wice_partial == partial
