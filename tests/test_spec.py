"""The run's specification (judge.run.spec): one declaration of every setting of an evaluation, built alike by the
Python API and by eval's options (each option one field), resolved once."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from typer.testing import CliRunner

import judge.api.evaluation as api_evaluation
from judge import api
from judge.cli.app import app
from judge.cli.evaluate import CLI_ONLY, OPTION_FIELDS, eval_command
from judge.errors import ConfigurationError, SettingError
from judge.judging.thresholds import read_thresholds
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.run.shards import Shard
from judge.run.spec import EvalPlan, EvalSpec, Execution
from judge.settings import DEFAULT_THRESHOLDS, JudgeSettings, ModelSettings, PassagePolicy, RetryPolicy

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
INPUTS = ["--requests", str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl")]
# Spec fields eval has no option for, each for a reason: the API's alone.
API_ONLY = {
    "measures": "the rows and leaderboard a notebook keeps; eval writes every measure",
    "window_chars": "the passage window, a setting of the passage cutter tuned once",
    "transport_attempts": "the retry budget; eval exposes --give-up-after, the one a user of a flaky server needs",
    "reasks": "as transport_attempts", "wait_multiplier": "as transport_attempts", "wait_max": "as transport_attempts",
}


def test_every_flat_name_is_one_field_of_one_section():
    names = EvalSpec.flat_names()
    assert names["seed"] == ("model", "seed") and names["max_chars"] == ("judge", "passages", "max_chars")
    assert names["concurrency"] == ("execution", "concurrency") and names["out"] == ("outputs", "out")
    assert len(set(names.values())) == len(names)


def test_evaluate_takes_exactly_the_spec_fields():
    """`evaluate`'s named arguments and its **options (EvalOptions) are the spec's fields, plus the two sections a
    caller may give whole (judge=, retry=): a field added to a section must be added to EvalOptions."""
    named = set(inspect.signature(api.evaluate).parameters) - {"options", "progress"}
    assert named | set(api.EvalOptions.__optional_keys__) == set(EvalSpec.flat_names()) | {"judge", "retry"}


def test_every_eval_option_is_one_spec_field_and_every_field_has_an_option():
    options = [name for name in inspect.signature(eval_command).parameters if name != "context"]
    fields = {OPTION_FIELDS.get(name, name) for name in options if name not in CLI_ONLY}
    assert fields <= set(EvalSpec.flat_names()), fields - set(EvalSpec.flat_names())
    # the options read at the edge (--api-base once or more, --router, --thresholds FILE) set these fields
    fields |= {"api_base", "api_bases", "router_config", "thresholds", "panel"}
    assert set(EvalSpec.flat_names()) - fields == set(API_ONLY)


class _Captured(Exception):
    pass


@pytest.fixture
def captured(monkeypatch):
    """The spec `judge.evaluate` built, caught before anything is read or asked."""
    specs: list[EvalSpec] = []

    async def stand_in(spec, progress):
        specs.append(spec)
        raise _Captured

    monkeypatch.setattr(api_evaluation, "_evaluate", stand_in)
    return specs


def _from_eval(arguments: list[str], captured: list[EvalSpec], tmp_path: Path) -> EvalSpec:
    result = CliRunner().invoke(app, ["eval", str(EXAMPLES / "reports"), *INPUTS, "--out", str(tmp_path / "o"),
                                      *arguments])
    assert isinstance(result.exception, _Captured), result.output
    return captured.pop()


def _at(spec: EvalSpec, name: str):
    value = spec
    for part in EvalSpec.flat_names()[name]:
        value = getattr(value, part)
    return value


# Each option with a value other than its default, and what its field must then hold.
OPTIONS = [
    (["--nuggets", str(EXAMPLES / "nuggets")], "nuggets", [EXAMPLES / "nuggets"]),
    (["--model", "openai/fake"], "model", "openai/fake"),
    (["--model", "openai/fake", "--api-base", "http://127.0.0.1:9/v1"], "api_base", "http://127.0.0.1:9/v1"),
    (["--model", "openai/fake", "--api-base", "http://127.0.0.1:9/v1", "--api-base", "http://127.0.0.1:8/v1"],
     "api_bases", ("http://127.0.0.1:9/v1", "http://127.0.0.1:8/v1")),
    (["--api-key", "k"], "api_key", "k"),
    (["--timeout", "30"], "timeout", 30.0),
    (["--temperature", "0.5"], "temperature", 0.5),
    (["--seed", "7"], "seed", 7),
    (["--max-tokens", "300"], "max_tokens", 300),
    (["--no-logprobs"], "logprobs", False),
    (["--model", "openai/fake", "--reasoning-effort", "high"], "reasoning_effort", "high"),
    (["--keep-reasoning"], "keep_reasoning", True),
    (["--thresholds", "none"], "thresholds", None),
    (["--citation-policy", "any"], "policy", "any"),
    (["--no-truncate"], "truncate", False),
    (["--max-doc-chars", "4000"], "max_chars", 4000),
    (["--max-doc-bytes", "5000"], "max_doc_bytes", 5000),
    (["--concurrency", "2"], "concurrency", 2),
    (["--threads", "1"], "threads", 1),
    (["--kernels", "safe"], "kernels", "safe"),
    (["--model", "openai/gpt-4o-mini", "--max-cost", "1.5"], "max_cost", 1.5),
    (["--price-per-1k", "0.01"], "price_per_1k", 0.01),
    (["--max-failed-fraction", "0.5"], "max_failed_fraction", 0.5),
    (["--give-up-after", "3"], "give_up_after", 3),
    (["--cache", "redis://127.0.0.1:9/0"], "cache", "redis://127.0.0.1:9/0"),
    (["--no-cache"], "cache", None),
    (["--shard", "2/3"], "shard", Shard(2, 3)),
    (["--resume"], "resume", True),
    (["--ray", "local"], "ray", "local"),
    (["--ray", "local", "--workers", "2"], "workers", 2),
    (["--model", "openai/gpt-4o-mini", "--batch"], "batch", True),
    (["--batch-poll", "5"], "batch_poll", 5.0),
    (["--prompts", str(EXAMPLES.parent / "prompts")], "prompts_dir", EXAMPLES.parent / "prompts"),
    (["--on-injection", "flag"], "on_injection", "flag"),
    (["--injection-detector", "rules+learned"], "injection_detector", "rules+learned"),
    (["--view"], "view", True),
    (["--with-baselines"], "baselines", True),
    (["--with-baselines", "--gold", str(EXAMPLES / "reports")], "gold", [EXAMPLES / "reports"]),
    (["--human", str(EXAMPLES / "reports")], "human", [EXAMPLES / "reports"]),
    (["--human", str(EXAMPLES / "reports"), "--sample", "requests"], "sample", "requests"),
    (["--human", str(EXAMPLES / "reports"), "--confidence", "0.9"], "confidence", 0.9),
    (["--model", "openai/a", "--model", "openai/b", "--vote", "any"], "vote", "any"),
]


@pytest.mark.parametrize(("arguments", "name", "expected"), OPTIONS, ids=[f"{o[1]}:{i}" for i, o in enumerate(OPTIONS)])
def test_each_eval_option_sets_its_field_and_no_other(arguments, name, expected, captured, tmp_path):
    default = _from_eval([], captured, tmp_path)
    chosen = _from_eval(arguments, captured, tmp_path)
    assert _at(chosen, name) == expected
    assert _at(default, name) != expected
    changed = {other for other in EvalSpec.flat_names() if other != "out" and _at(chosen, other) != _at(default, other)}
    # options given alongside (a model for --max-cost, --ray for --workers, --human for --sample) account for the rest
    companions = {OPTION_FIELDS.get(a[2:].replace("-", "_"), a[2:].replace("-", "_")) for a in arguments
                  if a.startswith("--")} | {"api_base", "api_bases", name}
    if arguments.count("--model") > 1:  # a model given twice is a panel
        companions.add("panel")
    assert changed <= companions, changed - companions


def test_every_option_of_eval_is_in_the_table():
    tested = {name for _, name, _ in OPTIONS}
    options = {OPTION_FIELDS.get(n, n) for n in inspect.signature(eval_command).parameters
               if n not in CLI_ONLY and n not in ("context", "reports", "requests", "docs", "out")}
    assert options - {"model"} <= tested


def test_the_api_and_eval_build_the_same_spec(captured, tmp_path):
    arguments = ["--model", "openai/fake", "--api-base", "http://127.0.0.1:9/v1", "--api-key", "none", "--seed", "7",
                 "--citation-policy", "any", "--max-doc-chars", "4000", "--give-up-after", "3", "--no-cache"]
    from_eval = _from_eval(arguments, captured, tmp_path)
    with pytest.raises(_Captured):
        api.evaluate([str(EXAMPLES / "reports")], requests=EXAMPLES / "requests.jsonl",
                     docs=[EXAMPLES / "docs.jsonl"], model="openai/fake", api_base="http://127.0.0.1:9/v1",
                     api_key="none", seed=7, policy="any", max_chars=4000, give_up_after=3, cache=None,
                     out=tmp_path / "o")
    from_api = captured.pop()
    assert from_api.model == from_eval.model and from_api.judge == from_eval.judge
    assert (from_api.retry, from_api.execution, from_api.outputs) == (from_eval.retry, from_eval.execution,
                                                                     from_eval.outputs)


def test_a_section_given_whole_is_a_base_its_fields_override():
    spec = EvalSpec.of(model="openai/x", judge=JudgeSettings(policy="any", passages=PassagePolicy(max_chars=900)),
                       max_doc_bytes=10, retry=RetryPolicy(reasks=1), give_up_after=2)
    assert spec.judge.policy == "any" and spec.judge.passages == PassagePolicy(max_chars=900, max_doc_bytes=10)
    assert (spec.retry.reasks, spec.retry.give_up_after) == (1, 2)


@pytest.mark.parametrize(("settings", "error", "message"), [
    ({"view": True}, SettingError, r"view=True \(--view\) writes OUT/view: give out="),
    ({"gold": "g.jsonl"}, SettingError, "gold .--gold.: only the baselines read it"),
    ({"workers": 2}, SettingError, "workers .--workers.: only Ray has workers"),
    ({"batch": True, "model": EMBEDDED_MODEL}, ConfigurationError, "--batch needs a hosted model"),
    ({"max_cost": 1.0, "model": "openai/argue-judge-unpriced"}, SettingError, "max_cost: litellm has no price"),
    ({"sample": "requests"}, SettingError, r"sample='requests' \(--sample\) describes the human sample"),
    ({"judge": 3}, TypeError, "judge must be a JudgeSettings, not int 3"),
    ({"tempreature": 1.0}, TypeError, "unknown setting 'tempreature'"),
    ({"concurrency": 0}, SettingError, r"concurrency=0 is not a number in \[1, 1024\]"),
    ({"shard": "4/3"}, Exception, "shards are numbered 1 to 3"),
])
def test_what_needs_another_setting_is_refused_by_the_spec(settings, error, message):
    with pytest.raises(error, match=message):
        EvalSpec.of(**{"model": "openai/fake", **settings})


def test_resolve_decides_the_default_thresholds_once():
    spec = EvalSpec.of(model=EMBEDDED_MODEL)
    assert spec.judge.thresholds is DEFAULT_THRESHOLDS  # the spec says what was asked ...
    plan = spec.resolve()                                # ... the plan what the run applies
    shipped = read_thresholds(Path(__import__("judge").__file__).parent / "data" / "embedded-thresholds.json")[0]
    assert isinstance(plan, EvalPlan) and plan.judge.thresholds == shipped
    assert plan.thresholds_notice.startswith("thresholds: embedded-thresholds.json")
    hosted = EvalSpec.of(model="openai/gpt-4o-mini", batch=True).resolve()
    assert hosted.judge.thresholds is None and hosted.thresholds_notice == "" and hosted.in_flight > 1000


def test_an_embedded_judge_on_ray_ignores_workers_and_says_so():
    plan = EvalSpec(model=ModelSettings(EMBEDDED_MODEL), execution=Execution(ray="local", workers=3)).resolve()
    assert plan.workers is None and any("--workers 3 has no effect" in note for note in plan.unapplied)


def test_an_eval_takes_its_output_lock_once(tmp_path, output_locks):
    """One eval holds OUT from its first check to its last rename: the lock is taken once, not by each step."""
    from judge.testing import FakeEndpoint, smart_responder

    with FakeEndpoint(smart_responder) as endpoint:
        api.evaluate(EXAMPLES / "reports", requests=EXAMPLES / "requests.jsonl", docs=EXAMPLES / "docs.jsonl",
                     nuggets=EXAMPLES / "nuggets", model="openai/fake", api_base=endpoint.api_base, api_key="none",
                     cache=None, out=tmp_path / "out")
    assert output_locks == ["eval"]
    assert (tmp_path / "out" / "judgments.jsonl").is_file()


def test_but_changes_a_field_and_keeps_the_rest_of_its_section():
    spec = EvalSpec.of(model=ModelSettings("openai/a", seed=3), concurrency=2)
    changed = spec.but(model="openai/b", resume=True)
    assert (changed.model.model, changed.model.seed) == ("openai/b", 3)
    assert (changed.execution.concurrency, changed.execution.resume) == (2, True)
    assert spec.model.model == "openai/a" and not spec.execution.resume  # the spec itself is unchanged


def test_models_given_twice_are_a_panel_each_with_its_server(captured, tmp_path):
    from judge.llm.panel import PanelMember

    spec = _from_eval(["--model", "openai/a", "--model", "openai/b", "--api-base", "http://127.0.0.1:9/v1",
                       "--api-base", "http://127.0.0.1:8/v1", "--seed", "7"], captured, tmp_path)
    assert [(m.model.model, m.model.api_base, m.model.seed) for m in spec.judges.panel] == [
        ("openai/a", "http://127.0.0.1:9/v1", 7), ("openai/b", "http://127.0.0.1:8/v1", 7)]
    assert spec.model == spec.judges.panel[0].model and spec.judges.vote is None
    prompts = EXAMPLES.parent / "prompts"
    judged = _from_eval(["--panel-judge", "openai/a", "--panel-judge", f"openai/a,prompts={prompts}", "--vote",
                         "unanimous"], captured, tmp_path)
    assert [m.prompts_dir for m in judged.judges.panel] == [None, EXAMPLES.parent / "prompts"]
    assert all(isinstance(m, PanelMember) for m in judged.judges.panel) and judged.judges.vote == "unanimous"
    with pytest.raises(_Captured):
        api.evaluate(str(EXAMPLES / "reports"), requests=EXAMPLES / "requests.jsonl", docs=EXAMPLES / "docs.jsonl",
                     model=["openai/a", "openai/b"], api_base="http://127.0.0.1:9/v1", seed=7, cache=None,
                     out=tmp_path / "o")
    assert captured.pop().judges.panel == spec.judges.panel[:1] + (
        PanelMember(spec.judges.panel[1].model.__class__("openai/b", "http://127.0.0.1:9/v1", seed=7)),)


@pytest.mark.parametrize(("arguments", "message"), [
    (["--vote", "majority"], "vote .--vote. applies to a panel of judges"),
    (["--model", "openai/a", "--model", "openai/b", "--batch"], "a panel of judges asks its judges from this process"),
    (["--model", "openai/a", "--model", "openai/b", "--api-base", "http://127.0.0.1:9/v1", "--api-base",
      "http://127.0.0.1:8/v1", "--api-base", "http://127.0.0.1:7/v1"], "2 judges .--model. and 3 servers"),
    (["--model", "openai/a", "--model", "openai/a"], "openai/a"),
])
def test_a_panel_eval_cannot_take_is_one_line(arguments, message, tmp_path):
    result = CliRunner().invoke(app, ["eval", str(EXAMPLES / "reports"), *INPUTS, "--out", str(tmp_path / "o"),
                                      *arguments])
    assert result.exit_code in (2, 3) and "Traceback" not in result.output, result.output
    assert __import__("re").search(message, result.output), result.output
