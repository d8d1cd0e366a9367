"""Every numeric option of every command, found in typer's own model of the CLI.

The test enumerates; it lists nothing: an int or float option added to any command later is fed the same edge
values. Each value must either be refused as a usage error (exit 2, one line that names the option), or be
accepted as a value inside the option's declared range (judge.cli.options.Bounds, printed in --help and in
docs/errors.md) — never a traceback, never a NaN or an infinity taken as a setting.

Only the option under test is given: click processes the options given on the command line before it notices a
missing required argument, so an accepted value is followed by an error about that argument (exit 2) and
nothing runs; a command without required arguments runs in an empty folder.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any, get_args

import pytest
import typer.main
from typer.testing import CliRunner

from judge.cli.app import app
from judge.cli.options import Bounds

EDGE_VALUES = ("0", "-1", "nan", "inf", "-inf", str(10**18))


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    subcommands = getattr(command, "commands", None)
    if subcommands:
        for name, sub in subcommands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield path, command


def _annotation(param: Any) -> Any:
    """The Python type typer built the parameter from (typer >= 0.20 keeps it; older ones wrap click's types)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        return descriptor.annotation
    return {"integer": int, "float": float}.get(getattr(param.type, "name", "").split()[0])


def _is_numeric(param: Any) -> bool:
    annotation = _annotation(param)
    kinds = set(get_args(annotation)) - {type(None)} if get_args(annotation) else {annotation}
    return bool(kinds) and kinds <= {int, float}


def numeric_options() -> list[tuple[tuple[str, ...], Any]]:
    root = typer.main.get_command(app)
    for name in root.list_commands(None):  # type: ignore[attr-defined]  # built when asked (cli.app.LazyCommands)
        root.get_command(None, name)  # type: ignore[attr-defined]
    return [(path, param) for path, command in _commands(root) for param in command.params
            if _is_numeric(param) and param.param_type_name == "option"]


OPTIONS = numeric_options()


def _bounds(param: Any) -> Bounds | None:
    callback = getattr(param.callback, "__wrapped__", param.callback)  # typer wraps callbacks (functools.wraps)
    return callback if isinstance(callback, Bounds) else None


def test_the_walk_finds_the_numeric_options_of_every_command_group():
    found = {(" ".join(path), param.opts[0]) for path, param in OPTIONS}
    # a few known ones, to show the walk reaches eval, calibrate and the baselines
    assert {("eval", "--timeout"), ("calibrate", "--n-boot"), ("calibrate", "--seed"),
            ("baseline pa-bleu", "--smooth-value")} <= found
    assert len(OPTIONS) >= 20


@pytest.mark.parametrize("path,param", [pytest.param(p, o, id=f"{' '.join(p)} {o.opts[0]}") for p, o in OPTIONS])
def test_every_numeric_option_declares_its_range(path, param):
    """The one mechanism: the option's callback is its Bounds, and --help prints the range."""
    bounds = _bounds(param)
    assert bounds is not None, f"{' '.join(path)} {param.opts[0]}: declare it with options.number"
    assert f"Range: {bounds.interval}" in (param.help or "")


@pytest.mark.parametrize("value", EDGE_VALUES)
@pytest.mark.parametrize("path,param", [pytest.param(p, o, id=f"{' '.join(p)} {o.opts[0]}") for p, o in OPTIONS])
def test_numeric_option_edge_value(path, param, value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    option = param.opts[0]
    result = CliRunner().invoke(app, [*path, f"{option}={value}"])
    output = result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    refused = re.search(rf"Invalid value for '{re.escape(option)}'|'{re.escape(option)}'.*not a valid", output)
    if refused:
        assert result.exit_code == 2 and len(lines) == 1, output
        return
    # accepted: a finite number inside the declared range, and the run went on to its next (one-line) error
    number = float(value)
    assert math.isfinite(number), f"{' '.join(path)} {option} accepted {value}: {output}"
    bounds = _bounds(param)
    assert bounds is not None and bounds.contains(number), f"{option} accepted {value} outside its range"
    assert result.exit_code != 0 or "nan" not in result.stdout.lower(), output
    assert result.exit_code in (0, 2) and len(lines) <= 1, output


# ---------------------------------------------------------------------------------------------------------------
# The Python API, walked the same way: the rules are the declared kinds of the settings' fields (judge.settings),
# which the options above read, so a value the CLI refuses is refused by the API with a ValueError or TypeError
# naming the argument, before any input is read or any model asked.

import inspect  # noqa: E402
from typing import Annotated, Literal, Union, get_origin, get_type_hints  # noqa: E402

from judge import api  # noqa: E402
from judge.calibration.suite import CalibrationConfig  # noqa: E402
from judge.labels import (  # noqa: E402
    VOTES,  # noqa: E402
    CitationPolicy,
    SampleDesign,
)
from judge.nuggets.settings import NuggetSettings  # noqa: E402
from judge.nuggets.spec import BankOutputs, NuggetExecution  # noqa: E402
from judge.run.spec import Execution  # noqa: E402
from judge.settings import (  # noqa: E402
    Confidence,
    Flag,
    JudgeSettings,
    ModelSettings,
    PassagePolicy,
    RetryPolicy,
    Seconds,
    _declared,
)

BAD_NUMBERS = (0, -1, math.nan, math.inf, -math.inf, 10**18, 1.5, "3", True)
BAD_CHOICES = ("most", "", 3, None)
EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples"
INPUTS = {"reports": EXAMPLES / "reports", "requests": EXAMPLES / "requests.jsonl", "docs": EXAMPLES / "docs.jsonl",
          "nuggets": EXAMPLES / "nuggets"}


def _optional(kind) -> bool:
    return get_origin(kind) in (Union, __import__("types").UnionType) and type(None) in get_args(kind)


def _base(kind):
    """The kind without Optional and Annotated: int, float, bool, a Literal, a class."""
    if _optional(kind):
        kind = next(member for member in get_args(kind) if member is not type(None))
    while get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    return kind


def _bad_values(kind):
    bounds, choices = _declared(kind)
    base, optional = _base(kind), _optional(kind)
    if bounds is not None:
        for value in BAD_NUMBERS:
            fits = isinstance(value, int | float) and not isinstance(value, bool) and bounds.contains(value) \
                and (base is not int or isinstance(value, int))
            if not fits:
                yield value
    elif choices:
        yield from (v for v in BAD_CHOICES if v not in choices and not (v is None and optional))
    elif base is bool:
        yield from ("yes", 1) + (() if optional else (None,))
    else:
        yield 42


def _fields(settings_class) -> dict:
    return get_type_hints(settings_class, include_extras=True)


# Each entry point's own arguments that have a declared kind (the rest are inputs, paths or objects, checked by the
# readers) and the settings whose fields reach it through **options. A parameter added to an entry point fails
# test_every_api_argument_has_a_rule until it is listed here with its kind, or as an input.
ENTRY_POINTS = {
    "evaluate": ({"concurrency": _fields(Execution)["concurrency"], "sample": SampleDesign,
                  "confidence": Confidence, "view": Flag, "baselines": Flag,
                  "judge": JudgeSettings | None},
                 [ModelSettings, Execution, JudgeSettings, PassagePolicy, RetryPolicy]),
    "score": ({"policy": CitationPolicy, "sample": SampleDesign, "confidence": Confidence}, []),
    "calibrate": ({"concurrency": _fields(CalibrationConfig)["concurrency"], "seed": _fields(CalibrationConfig)["seed"],
                   "n_boot": _fields(CalibrationConfig)["n_boot"],
                   "wice_partial": Literal["strict", "exclude", "separate"],
                   "fit_metric": Literal["kappa"] | None, "plots": Flag,
                   "judge": JudgeSettings | None, "batch": Flag,
                   "batch_poll": Seconds, "vote": Literal[VOTES] | None, "panel": list | None}, [ModelSettings]),
    "html_view": ({"policy": CitationPolicy}, []),
    "baseline": ({"name": Literal[tuple(api.BASELINE_SETTINGS)]}, []),
    "read_judgments": ({"format": Literal["argue-judge", "auto-argue"] | None}, []),
    "write_judgments": ({"format": Literal["argue-judge", "auto-argue"]}, []),
    "create_nuggets": ({name: _fields(NuggetSettings)[name] for name in ("max_nuggets", "max_docs", "per_document")}
                       | {name: _fields(NuggetExecution)[name] for name in ("concurrency", "batch", "batch_poll")}
                       | {"format": _fields(BankOutputs)["format"], "passages": PassagePolicy | None,
                          "thresholds": _fields(JudgeSettings)["thresholds"]}, [ModelSettings, NuggetSettings]),
    "pool_nuggets": ({name: _fields(NuggetExecution)[name] for name in ("concurrency", "batch", "batch_poll")} | {
                      "passages": PassagePolicy | None,
                      "thresholds": _fields(JudgeSettings)["thresholds"]}, [ModelSettings]),
    "accept_candidates": ({}, []),
}
INPUT_ARGUMENTS = {"reports", "requests", "docs", "nuggets", "judgments", "human", "judged", "gold", "against", "cache",
                   "out",
                   "attributionbench", "wice", "sample", "exclude", "attacks", "attacks_file", "progress", "path",
                   "shards", "file", "model", "api_base", "api_key", "measures", "overwrite",
                   "doc_lists", "gold_report", "prompts_dir", "candidates"}
# Given whole (objects), or paths: checked as such, not by the values below.
PASSED_WHOLE = {"model", "judge", "retry", "cache", "shard", "api_base", "api_key", "passages", "prompts_dir",
                "thresholds", "router_config", "api_bases"}


def api_cases():
    for name, (own, settings) in ENTRY_POINTS.items():
        for argument, kind in own.items():
            for value in _bad_values(kind):
                yield name, argument, value
        for settings_class in settings:
            for argument, kind in _fields(settings_class).items():
                if argument in PASSED_WHOLE:
                    continue  # passed as their own arguments, or objects checked as their kind above
                if argument == "concurrency" and name != "evaluate":
                    continue
                for value in _bad_values(kind):
                    yield name, argument, value


def _call(name, argument, value, tmp_path):
    arguments = {"model": "openai/fake", "api_base": "http://127.0.0.1:9/v1", "api_key": "none", "cache": None}
    if name == "evaluate":
        return api.evaluate(INPUTS["reports"], requests=INPUTS["requests"], docs=INPUTS["docs"],
                            **{**arguments, argument: value})
    if name == "score":
        return api.score(tmp_path / "missing.jsonl", **{argument: value})
    if name == "calibrate":
        return api.calibrate(nuggets=INPUTS["nuggets"], docs=INPUTS["docs"], **{**arguments, argument: value})
    if name == "html_view":
        return api.html_view(tmp_path / "missing.jsonl", out=tmp_path / "view", **{argument: value})
    if name == "baseline":
        return api.baseline(value, INPUTS["reports"])
    if name == "create_nuggets":
        return api.create_nuggets(requests=INPUTS["requests"], docs=INPUTS["docs"], **{**arguments, argument: value})
    if name == "pool_nuggets":
        return api.pool_nuggets(nuggets=INPUTS["nuggets"], reports=INPUTS["reports"], requests=INPUTS["requests"],
                                docs=INPUTS["docs"], **{**arguments, argument: value})
    if name == "read_judgments":
        return api.read_judgments(tmp_path / "missing.jsonl", **{argument: value})
    return api.write_judgments(tmp_path / "out.jsonl", [], **{argument: value})


@pytest.mark.parametrize("name,argument,value", [pytest.param(n, a, v, id=f"{n}-{a}={v!r}")
                                                 for n, a, v in api_cases()])
def test_every_api_entry_point_refuses_what_the_cli_refuses(name, argument, value, tmp_path):
    """A ValueError or TypeError whose message names the argument, before any file is read (the inputs named by
    score, view and read_judgments do not exist: reaching them would raise InputError instead)."""
    with pytest.raises((ValueError, TypeError)) as refused:
        _call(name, argument, value, tmp_path)
    assert argument in str(refused.value), f"{name}({argument}={value!r}): {refused.value}"
    assert not isinstance(refused.value, AttributeError)


def test_every_api_argument_has_a_rule():
    for name, (own, _) in ENTRY_POINTS.items():
        parameters = inspect.signature(getattr(api, name)).parameters
        unlisted = [p for p in parameters if p not in own and p not in INPUT_ARGUMENTS
                    and parameters[p].kind is not inspect.Parameter.VAR_KEYWORD]
        assert not unlisted, f"judge.api.{name}: give {unlisted} a rule (judge.settings) and list it here"


def test_the_issue_examples_are_refused():
    """concurrency=0 used to hang on asyncio.Semaphore(0); policy='most', on_injection='punish' ran to the end
    and signed cite:most|inj:punish."""
    with pytest.raises(ValueError, match="concurrency=0"):
        api.evaluate(INPUTS["reports"], requests=INPUTS["requests"], docs=INPUTS["docs"], model="openai/fake",
                     cache=None, concurrency=0)
    with pytest.raises(ValueError, match="policy='most'"):
        JudgeSettings(policy="most", on_injection="punish")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="on_injection='punish'"):
        JudgeSettings(on_injection="punish")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_chars=0"):
        PassagePolicy(max_chars=0)


# Inputs of the wrong type (a number where a path or records go) are refused naming the argument as well, never
# an AttributeError from inside. Every input of every entry point is walked; the base call is otherwise valid.
def _base_calls(tmp_path):
    judgments = tmp_path / "j.jsonl"
    return {
        "evaluate": (api.evaluate, (INPUTS["reports"],), dict(requests=INPUTS["requests"], docs=INPUTS["docs"],
                                                               model="openai/fake", cache=None)),
        "score": (api.score, (judgments,), {}),
        "calibrate": (api.calibrate, (), dict(nuggets=INPUTS["nuggets"], docs=INPUTS["docs"], model="openai/fake",
                                              cache=None)),
        "html_view": (api.html_view, (judgments,), dict(out=tmp_path / "view")),
        "run_baselines": (api.run_baselines, (INPUTS["reports"],), {}),
        "baseline": (api.baseline, ("rouge", INPUTS["reports"]), {}),
        "merge": (api.merge, ([tmp_path / "a"],), dict(out=tmp_path / "merged")),
        "cache_stats": (api.cache_stats, (tmp_path / "cache",), {}),
        "clear_cache": (api.clear_cache, (tmp_path / "cache",), {}),
        "export_cache": (api.export_cache, (tmp_path / "cache",), {}),
        "import_cache": (api.import_cache, (tmp_path / "x.jsonl",), {}),
        "read_judgments": (api.read_judgments, (judgments,), {}),
        "write_judgments": (api.write_judgments, (tmp_path / "w.jsonl", []), {}),
        "create_nuggets": (api.create_nuggets, (), dict(requests=INPUTS["requests"], docs=INPUTS["docs"],
                                                        model="openai/fake", cache=None)),
        "pool_nuggets": (api.pool_nuggets, (), dict(nuggets=INPUTS["nuggets"], reports=INPUTS["reports"],
                                                    requests=INPUTS["requests"], docs=INPUTS["docs"],
                                                    model="openai/fake", cache=None)),
        "accept_candidates": (api.accept_candidates, (), dict(nuggets=INPUTS["nuggets"], candidates=judgments,
                                                              out=tmp_path / "banks")),
    }


WRONG_TYPE_CASES = [(name, parameter) for name in ("evaluate", "score", "calibrate", "html_view", "run_baselines",
                                                   "baseline",
                                                   "merge", "cache_stats", "clear_cache", "export_cache",
                                                   "import_cache", "read_judgments", "write_judgments",
                                                   "create_nuggets", "pool_nuggets", "accept_candidates")
                    for parameter in inspect.signature(getattr(api, name)).parameters
                    if parameter in INPUT_ARGUMENTS | {"judgments", "path", "shards", "file"}
                    and parameter not in ("sample",)]


@pytest.mark.parametrize("name,parameter", WRONG_TYPE_CASES, ids=[f"{n}-{p}" for n, p in WRONG_TYPE_CASES])
def test_every_api_input_of_the_wrong_type_is_refused_naming_it(name, parameter, tmp_path):
    call, args, kwargs = _base_calls(tmp_path)[name]
    positional = list(inspect.signature(call).parameters)
    args = list(args)
    if parameter in positional[:len(args)]:
        args[positional.index(parameter)] = 42
    else:
        kwargs = {**kwargs, parameter: 42}
    with pytest.raises((TypeError, ValueError)) as refused:
        call(*args, **kwargs)
    assert not isinstance(refused.value, AttributeError)
    assert parameter in str(refused.value), f"{name}({parameter}=42): {refused.value!r}"


def test_a_setting_the_rules_refuse_is_one_line_on_the_command_line_not_a_traceback(tmp_path):
    """A value only the settings object can judge (an empty --model) ends as a usage error: one line naming it,
    exit 2, as the API raises a ValueError naming it."""
    result = CliRunner().invoke(app, ["eval", "examples/reports", "--requests", "examples/requests.jsonl",
                                      "--docs", "examples/docs.jsonl", "--model", "", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "model must name a model" in result.output
    with pytest.raises(ValueError, match="model must name a model"):
        api.evaluate("examples/reports", requests="examples/requests.jsonl", docs="examples/docs.jsonl", model="")


@pytest.mark.parametrize(("options", "message"), [
    ({"max_cost": 1.0, "model": "openai/argue-judge-unpriced"}, "max_cost: litellm has no price"),
    ({"workers": 2, "model": "openai/fake"}, "workers .--workers.: only Ray has workers"),
    ({"ray": "runs/", "model": "openai/fake"}, "is not local"),
])
def test_the_api_refuses_what_eval_refuses_for_budgets_and_workers(options, message):
    from judge.errors import ConfigurationError

    with pytest.raises((ValueError, ConfigurationError), match=message):
        api.evaluate("examples/reports", requests="examples/requests.jsonl", docs="examples/docs.jsonl",
                     cache=None, **options)
