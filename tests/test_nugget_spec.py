"""The nugget calls' specifications (judge.nuggets.spec): one declaration of every setting of `nuggets create`,
`nuggets pool` and `nuggets pool --accept`, built alike by the Python API and by the commands' options (each option
one field), resolved once, refused by the spec whoever builds it."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path

import pytest
from typer.testing import CliRunner

import judge.nuggets.api as nugget_api
from judge import api
from judge.cli.app import app
from judge.cli.nuggets import ACCEPT_OPTIONS, CLI_ONLY, OPTION_FIELDS, create_command, pool_command
from judge.errors import ConfigurationError, SettingError
from judge.judging.thresholds import SHIPPED_THRESHOLDS, read_thresholds
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.nuggets.settings import NuggetSettings
from judge.nuggets.spec import CREATE_MAX_TOKENS, AcceptSpec, CreateSpec, NuggetPlan, PoolSpec
from judge.settings import DEFAULT_THRESHOLDS, ModelSettings, PassagePolicy
from judge.testing import FakeEndpoint
from judge.testing.nugget_responders import nugget_responder
from judge.view.candidates import candidates_page
from tests.test_nuggets import BANKS, DOCS, EXAMPLES, REQUESTS, _pool_inputs, reviewed_candidates

# Spec fields no option sets, each for a reason: the API's alone.
MODEL_API_ONLY = {
    "max_tokens": "each command has its own budget (creation's CREATE_MAX_TOKENS, pooling's eval's)",
    "api_bases": "several servers: eval's --api-base repeated; the nugget commands take one",
    "router_config": "as api_bases", "kernels": "the embedded judge's kernels: eval's option, the default here",
    "reasoning_effort": "eval's option; a notebook may set it", "keep_reasoning": "as reasoning_effort",
    "passages": "the passage budget of the bindings, eval's default unless a notebook sets it",
}
CREATE_API_ONLY = MODEL_API_ONLY | {
    name: "a creation setting tuned once; a notebook may vary it"
    for name in ("per_document", "merge_overlap", "bind_share", "claim_share", "max_extra_bindings")}
# Set by the command, not by an option: `nuggets pool` always writes the review page.
POOL_SET_BY_THE_COMMAND = {"page"}


def test_every_flat_name_is_one_field_of_one_section():
    create, pool, accept = CreateSpec.flat_names(), PoolSpec.flat_names(), AcceptSpec.flat_names()
    assert create["max_nuggets"] == ("creation", "max_nuggets") and create["format"] == ("outputs", "format")
    assert create["concurrency"] == pool["concurrency"] == ("execution", "concurrency")
    assert create["thresholds"] == pool["thresholds"] == ("judge", "thresholds")
    assert pool["page"] == ("outputs", "page") and accept["candidates"] == ("inputs", "candidates")
    for names in (create, pool, accept):
        assert len(set(names.values())) == len(names)


def _named(call) -> set[str]:
    return set(inspect.signature(call).parameters) - {"model_options"}


def test_the_nugget_calls_take_exactly_the_spec_fields():
    """The named arguments and the **model_options (the model's fields, and the rest of the spec's) are the spec's
    fields: a field added to a section is a keyword of the call."""
    model = {f.name for f in fields(ModelSettings)}
    assert _named(api.create_nuggets_async) | model | {f.name for f in fields(NuggetSettings)} == set(
        CreateSpec.flat_names())
    assert _named(api.pool_nuggets_async) | model | {"page"} == set(PoolSpec.flat_names())
    assert _named(api.accept_candidates) == set(AcceptSpec.flat_names())
    assert _named(api.create_nuggets) == _named(api.create_nuggets_async)


def _options(command) -> set[str]:
    return {OPTION_FIELDS.get(name, name) for name in inspect.signature(command).parameters
            if name not in CLI_ONLY and name != "ctx"}


def test_every_option_is_one_spec_field_and_every_field_has_an_option():
    create = _options(create_command)
    assert create <= set(CreateSpec.flat_names()), create - set(CreateSpec.flat_names())
    # --thresholds FILE (or none) is read at the edge and sets the field
    assert set(CreateSpec.flat_names()) - create - {"thresholds"} == set(CREATE_API_ONLY)
    pool = _options(pool_command) - {"candidates"}  # --accept: AcceptSpec's candidates
    assert pool <= set(PoolSpec.flat_names()), pool - set(PoolSpec.flat_names())
    assert set(PoolSpec.flat_names()) - pool - {"thresholds"} == set(MODEL_API_ONLY) | POOL_SET_BY_THE_COMMAND
    accept = {OPTION_FIELDS.get(name, name) for name in ACCEPT_OPTIONS} - CLI_ONLY
    assert accept == set(AcceptSpec.flat_names())


class _Captured(Exception):
    pass


@pytest.fixture
def captured(monkeypatch):
    """The spec each nugget call built, caught before anything is read or asked."""
    specs: list = []

    def stand_in(spec):
        specs.append(spec)
        raise _Captured

    async def async_stand_in(spec):
        stand_in(spec)

    monkeypatch.setattr(nugget_api, "_create", async_stand_in)
    monkeypatch.setattr(nugget_api, "_pool", async_stand_in)
    monkeypatch.setattr(nugget_api, "_accept", stand_in)
    return specs


def _invoke(arguments: list[str], captured: list):
    result = CliRunner().invoke(app, arguments)
    assert isinstance(result.exception, _Captured), result.output
    return captured.pop()


def _from_create(arguments: list[str], captured: list, tmp_path: Path) -> CreateSpec:
    return _invoke(["nuggets", "create", "--requests", str(REQUESTS), "--docs", str(DOCS), "--out",
                    str(tmp_path / "banks"), *arguments], captured)


def _from_pool(arguments: list[str], captured: list, tmp_path: Path) -> PoolSpec:
    return _invoke(["nuggets", "pool", "--nuggets", str(BANKS), "--reports", str(EXAMPLES / "reports"),
                    "--requests", str(REQUESTS), "--docs", str(DOCS), "--out", str(tmp_path / "cand.jsonl"),
                    *arguments], captured)


def _at(spec, name: str):
    value = spec
    for part in type(spec).flat_names()[name]:
        value = getattr(value, part)
    return value


PROMPTS = EXAMPLES.parent / "prompts"
# Each option the two judging commands share, with a value other than its default, and what its field then holds.
SHARED = [
    (["--model", "openai/fake"], "model", "openai/fake"),
    (["--api-base", "http://127.0.0.1:9/v1"], "api_base", "http://127.0.0.1:9/v1"),
    (["--api-key", "k"], "api_key", "k"),
    (["--temperature", "0.5"], "temperature", 0.5),
    (["--seed", "7"], "seed", 7),
    (["--timeout", "30"], "timeout", 30.0),
    (["--threads", "1"], "threads", 1),
    (["--concurrency", "2"], "concurrency", 2),
    (["--prompts", str(PROMPTS)], "prompts_dir", PROMPTS),
    (["--no-logprobs"], "logprobs", False),
    (["--thresholds", "none"], "thresholds", None),
    (["--cache", "redis://127.0.0.1:9/0"], "cache", "redis://127.0.0.1:9/0"),
    (["--no-cache"], "cache", None),
    (["--model", "openai/gpt-4o-mini", "--batch"], "batch", True),
    (["--batch-poll", "5"], "batch_poll", 5.0),
]
CREATE = SHARED + [
    (["--doc-lists", str(EXAMPLES / "requests.jsonl")], "doc_lists", EXAMPLES / "requests.jsonl"),
    (["--gold-report", str(EXAMPLES / "reports")], "gold_report", [EXAMPLES / "reports"]),
    (["--max-nuggets", "3"], "max_nuggets", 3),
    (["--max-docs", "2"], "max_docs", 2),
    (["--format", "nuggetizer"], "format", "nuggetizer"),
]


def _companions(arguments: list[str], name: str) -> set[str]:
    """The fields the options given alongside set (a hosted model for --batch)."""
    return {OPTION_FIELDS.get(a[2:].replace("-", "_"), a[2:].replace("-", "_")) for a in arguments
            if a.startswith("--")} | {name}


def _changed(spec, default) -> set[str]:
    return {name for name in type(spec).flat_names() if _at(spec, name) != _at(default, name)}


@pytest.mark.parametrize(("arguments", "name", "expected"), CREATE, ids=[f"{c[1]}:{i}" for i, c in enumerate(CREATE)])
def test_each_create_option_sets_its_field_and_no_other(arguments, name, expected, captured, tmp_path):
    default = _from_create([], captured, tmp_path)
    chosen = _from_create(arguments, captured, tmp_path)
    assert _at(chosen, name) == expected and _at(default, name) != expected
    assert _changed(chosen, default) <= _companions(arguments, name), _changed(chosen, default)


@pytest.mark.parametrize(("arguments", "name", "expected"), SHARED, ids=[f"{c[1]}:{i}" for i, c in enumerate(SHARED)])
def test_each_pool_option_sets_its_field_and_no_other(arguments, name, expected, captured, tmp_path):
    default = _from_pool([], captured, tmp_path)
    chosen = _from_pool(arguments, captured, tmp_path)
    assert _at(chosen, name) == expected and _at(default, name) != expected
    assert _changed(chosen, default) <= _companions(arguments, name), _changed(chosen, default)
    assert chosen.outputs.page is candidates_page  # the command writes the review page


def test_accept_maps_its_options_onto_its_spec(captured, tmp_path):
    reviewed = reviewed_candidates(tmp_path)
    spec = _invoke(["nuggets", "pool", "--nuggets", str(BANKS), "--accept", str(reviewed), "--out",
                    str(tmp_path / "extended")], captured)
    assert spec == AcceptSpec.of(nuggets=[BANKS], candidates=reviewed, out=tmp_path / "extended")


def test_the_api_and_the_commands_build_the_same_spec(captured, tmp_path):
    options = ["--model", "openai/fake", "--api-base", "http://127.0.0.1:9/v1", "--api-key", "none", "--seed", "7",
               "--max-nuggets", "3", "--format", "nuggetizer", "--no-cache", "-j", "2"]
    from_cli = _from_create(options, captured, tmp_path)
    with pytest.raises(_Captured):
        api.create_nuggets(requests=REQUESTS, docs=[DOCS], out=tmp_path / "banks", model="openai/fake",
                           api_base="http://127.0.0.1:9/v1", api_key="none", seed=7, max_nuggets=3,
                           format="nuggetizer", cache=None, concurrency=2)
    from_api = captured.pop()
    assert from_api.inputs.requests == from_cli.inputs.requests
    assert (from_api.model, from_api.creation, from_api.judge, from_api.execution) == (
        from_cli.model, from_cli.creation, from_cli.judge, from_cli.execution)
    assert from_api.outputs.format == from_cli.outputs.format and from_api.model.max_tokens == CREATE_MAX_TOKENS

    pooled = _from_pool(["--model", "openai/fake", "--seed", "7", "--no-cache"], captured, tmp_path)
    with pytest.raises(_Captured):
        api.pool_nuggets(nuggets=[BANKS], reports=[EXAMPLES / "reports"], requests=REQUESTS, docs=[DOCS],
                         out=tmp_path / "cand.jsonl", model="openai/fake", seed=7, cache=None, page=candidates_page)
    assert captured.pop() == pooled


@pytest.mark.parametrize(("spec", "settings", "error", "message"), [
    (CreateSpec, {"batch": True, "model": EMBEDDED_MODEL}, ConfigurationError, "--batch needs a hosted model"),
    (PoolSpec, {"batch": True, "model": EMBEDDED_MODEL}, ConfigurationError, "--batch needs a hosted model"),
    (PoolSpec, {"page": candidates_page, "out": None}, SettingError, "page writes OUT.html beside the candidates"),
    (PoolSpec, {"page": "yes"}, TypeError, "page must render the review page"),
    (PoolSpec, {"max_nuggets": 3}, TypeError, "unknown setting 'max_nuggets'"),
    (CreateSpec, {"tempreature": 1.0}, TypeError, "unknown setting 'tempreature'"),
    (CreateSpec, {"concurrency": 0}, SettingError, r"concurrency=0 is not a number in \[1, 1024\]"),
    (CreateSpec, {"bind_share": 0.0}, SettingError, r"bind_share=0.0 is not a number in \(0, 1\]"),
    (CreateSpec, {"format": "xml"}, SettingError, "format='xml': choose one of v3, nuggetizer"),
    (CreateSpec, {"requests": 3}, TypeError, "requests must be a path"),
    (CreateSpec, {"docs": []}, ValueError, "docs is empty"),
    (CreateSpec, {"out": 3}, TypeError, "out must be a path"),
    (PoolSpec, {"judge": 3}, TypeError, "judge must be a NuggetJudging, not int 3"),
])
def test_what_a_nugget_call_refuses_is_refused_by_its_spec(spec, settings, error, message, tmp_path):
    inputs = {"requests": REQUESTS, "docs": DOCS, "out": tmp_path / "o"}
    if spec is PoolSpec:
        inputs |= {"nuggets": BANKS, "reports": EXAMPLES / "reports"}
    with pytest.raises(error, match=message):
        spec.of(**{**inputs, "model": "openai/fake", **settings})


def test_a_model_given_whole_keeps_its_max_tokens():
    spec = CreateSpec.of(requests=REQUESTS, docs=DOCS, model=ModelSettings("openai/fake"))
    assert spec.model.max_tokens == 512 and CreateSpec.of(requests=REQUESTS, docs=DOCS,
                                                          model="openai/fake").model.max_tokens == CREATE_MAX_TOKENS


def test_the_commands_leave_the_default_thresholds_to_resolve(captured, tmp_path):
    """Without --thresholds the command decides nothing: the spec asks for the default, and resolve() alone turns
    it into the embedded judge's shipped rules (with their notice), as eval's does."""
    spec = _from_create([], captured, tmp_path)
    assert spec.judge.thresholds is DEFAULT_THRESHOLDS and _from_pool([], captured, tmp_path).judge.thresholds \
        is DEFAULT_THRESHOLDS
    plan = spec.resolve()
    assert isinstance(plan, NuggetPlan) and plan.thresholds == read_thresholds(SHIPPED_THRESHOLDS)[0]
    assert plan.thresholds_notice.startswith("thresholds: embedded-thresholds.json")
    hosted = CreateSpec.of(requests=REQUESTS, docs=DOCS, model="openai/gpt-4o-mini", batch=True).resolve()
    assert hosted.thresholds is None and hosted.thresholds_notice == "" and hosted.in_flight > 1000
    assert plan.tag == NuggetSettings().signed(PassagePolicy()) and plan.in_flight == 4


def test_a_nugget_command_decides_its_thresholds_once(tmp_path, monkeypatch):
    import judge.judging.thresholds as thresholds

    decided: list[str] = []
    real = thresholds.shipped_choice

    def counting(model, prompts_dir):
        decided.append(model.model)
        return real(model, prompts_dir)

    monkeypatch.setattr(thresholds, "shipped_choice", counting)
    with FakeEndpoint(nugget_responder) as endpoint:
        result = CliRunner().invoke(app, ["nuggets", "create", "--requests", str(REQUESTS), "--docs", str(DOCS),
                                          "--out", str(tmp_path / "banks"), "--max-nuggets", "1", "--no-cache",
                                          "--model", "openai/fake", "--api-base", endpoint.api_base,
                                          "--api-key", "none"])
    assert result.exit_code == 0, result.output
    assert decided == ["openai/fake"]


def test_each_nugget_command_takes_its_output_lock_once(tmp_path, output_locks):
    """pool writes its candidates and their page under one hold of the folder (the page was written under a second)."""
    taken = output_locks
    docs, reports = _pool_inputs(tmp_path)
    out = tmp_path / "pooled" / "candidates.jsonl"
    runner = CliRunner()
    with FakeEndpoint(nugget_responder) as endpoint:
        model = ["--model", "openai/fake", "--api-base", endpoint.api_base, "--api-key", "none", "--no-cache"]
        created = runner.invoke(app, ["nuggets", "create", "--requests", str(REQUESTS), "--docs", str(DOCS), "--out",
                                      str(tmp_path / "banks"), "--max-nuggets", "1", *model])
        assert created.exit_code == 0, created.output
        assert taken == ["nuggets create"]
        pooled = runner.invoke(app, ["nuggets", "pool", "--nuggets", str(BANKS), "--reports", str(reports),
                                     "--requests", str(REQUESTS), "--docs", str(docs), "--out", str(out), *model])
    assert pooled.exit_code == 0, pooled.output
    assert taken == ["nuggets create", "nuggets pool"]
    assert out.is_file() and (tmp_path / "pooled" / "candidates.jsonl.html").is_file()
    accepted = runner.invoke(app, ["nuggets", "pool", "--nuggets", str(BANKS), "--accept",
                                   str(reviewed_candidates(tmp_path)), "--out", str(tmp_path / "extended")])
    assert accepted.exit_code == 0, accepted.output
    assert taken == ["nuggets create", "nuggets pool", "nuggets pool --accept"]


def test_resolve_applies_the_model_settings_as_the_judge_does():
    """A hosted judge has no llama.cpp threads: the plan's model drops them and says so, as eval's plan does."""
    plan = PoolSpec.of(nuggets=BANKS, reports=EXAMPLES / "reports", requests=REQUESTS, docs=DOCS,
                       model="openai/gpt-4o-mini", threads=2).resolve()
    assert plan.model.threads is None and any("--threads 2 has no effect" in note for note in plan.unapplied)
    embedded = PoolSpec.of(nuggets=BANKS, reports=EXAMPLES / "reports", requests=REQUESTS, docs=DOCS,
                           model=EMBEDDED_MODEL, threads=2).resolve()
    assert embedded.model.threads == 2 and embedded.unapplied == ()
