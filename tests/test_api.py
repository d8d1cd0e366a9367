"""The Python API (judge.api, exported lazily from `judge`): its docstring examples run as doctests, in a folder
laid out as after the README's first command (examples/ and argue-out/), with the fake endpoint as the judge."""

from __future__ import annotations

import doctest
import json
import os
import re
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


def api_modules() -> list:
    """judge.api and each module of it (a module's doctests are found on the module that defines them)."""
    import importlib
    import pkgutil

    return [api, *(importlib.import_module(f"judge.api.{m.name}") for m in pkgutil.iter_modules(api.__path__))]


def test_every_docstring_example_of_the_api_runs(readme_folder):
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for module in api_modules() for t in finder.find(module) if t.examples]
    names = {t.name.rsplit(".", 1)[-1] for t in tests}
    assert names >= {"evaluate", "score", "calibrate", "html_view", "run_baselines", "read_judgments",
                     "write_judgments"}
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed (output above)"
    assert result.attempted >= 20


def test_the_api_is_judge_s_top_level_and_loads_on_first_use():
    assert set(judge.__all__) >= {"evaluate", "score", "calibrate", "read_judgments", "write_judgments"}
    assert judge.score is api.score and judge.evaluate is api.evaluate
    import importlib

    importlib.import_module("judge.baselines.suite")  # importing the subpackages must not hide an API call
    importlib.import_module("judge.view")
    assert judge.html_view is api.html_view and judge.run_baselines is api.run_baselines
    with pytest.raises(AttributeError, match="no attribute 'scores'"):
        judge.scores  # noqa: B018  (a typo must not pass silently)
    # `import judge` and `judge.__version__` load no model client; nor do score and the judgments format.
    code = ("import sys, judge; judge.__version__; assert 'judge.api' not in sys.modules; "
            "judge.score; judge.read_judgments; "
            "print(sorted(m for m in ('litellm', 'instructor', 'judge.llm.client') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == "[]"


def test_the_api_package_exports_the_public_and_command_names():
    """judge/api/ is split by job; `from judge.api import X` works for every public name and for what the commands
    build their calls from."""
    besides = {"calibration_config", "CalibrationProgress", "CALIBRATED_POLICIES", "choose_attacks",
               "BaselineScores", "BASELINE_SETTINGS", "BASELINE_RULES", "BASELINE_COLUMNS", "DEFAULT_CACHE",
               "PathLike", "EvalOptions", "ReportInputs", "RequestInputs", "DocumentInputs", "NuggetInputs",
               "JudgmentInputs"}
    missing = [name for name in [*api.__all__, *besides] if not hasattr(api, name)]
    assert missing == []
    assert all(getattr(judge, name) is getattr(api, name) for name in api.__all__)


def test_judge_api_all_is_the_one_list_of_public_names():
    """judge/__init__.py cannot import judge.api (it stays light), so it keeps a copy of the list for its lazy
    table and its TYPE_CHECKING imports: both must be judge.api.__all__, names and order."""
    import ast

    assert judge._API == tuple(api.__all__)
    assert set(judge.__all__) == {"__version__", *api.__all__}
    tree = ast.parse((ROOT / "judge" / "__init__.py").read_text(encoding="utf-8"))
    typed = [alias.name for node in tree.body
             if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
             for statement in node.body if isinstance(statement, ast.ImportFrom) and statement.module == "judge.api"
             for alias in statement.names]
    assert sorted(typed) == sorted(api.__all__)
    assert set(api.__all__) <= set(dir(judge))


def test_an_evaluation_starts_one_way():
    """`evaluate` and its awaitable twin are the only ways to start an evaluation: the run configuration and request
    objects the command line used to build are gone from the API."""
    for name in ("evaluate_with", "evaluate_with_async", "eval_config", "EvalRequest"):
        assert not hasattr(api, name) and not hasattr(judge, name), name
    from judge.cli.app import API_CALLS

    assert API_CALLS["eval"] == "evaluate"


def test_public_calls_type_their_inputs():
    """No named parameter of a public call is typed Any: inputs say what they take (paths, objects or dicts)."""
    import inspect

    untyped = [f"{name}({parameter.name}: {parameter.annotation})" for name in api.__all__
               if inspect.isfunction(member := getattr(api, name))
               for parameter in inspect.signature(member).parameters.values()
               if parameter.kind is not parameter.VAR_KEYWORD and "Any" in str(parameter.annotation)]
    assert untyped == []
    annotations = inspect.signature(api.evaluate).parameters
    assert annotations["reports"].annotation == "ReportInputs" and annotations["human"].annotation == \
        "JudgmentInputs | None"


def test_an_unknown_evaluate_option_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="unknown setting 'temprature'"):
        api.evaluate(EXAMPLES / "reports", requests=EXAMPLES / "requests.jsonl", docs=EXAMPLES / "docs.jsonl",
                     cache=None, temprature=0.5)  # type: ignore[call-arg]


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
     "--injection-detector", "rules+learned", "--concurrency", "2"],
    dict(model="openai/fake", api_base="http://127.0.0.1:9/v1", api_key="none", temperature=0.5, seed=7,
         max_tokens=300, timeout=30.0, threads=1, kernels="safe", concurrency=2),
    JudgeSettings(policy="any", truncate=False, passages=PassagePolicy(max_chars=4000), on_injection="flag",
                  injection_detector="rules+learned"),
)


@pytest.mark.parametrize(("options", "arguments", "judging"), [EVAL_DEFAULTS, EVAL_CHOSEN],
                         ids=["defaults", "chosen"])
def test_the_api_and_eval_build_equal_configs(tmp_path, monkeypatch, options, arguments, judging):
    """`judge.evaluate(...)` and `argue-judge eval` with the same inputs and choices judge with equal configs
    (model, sampling, thresholds, prompts, passages, injection policy, cache, concurrency, retry policy, budget):
    the command makes the one `evaluate` call, and a field set on one path only would break the equality."""
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
                     nuggets=EXAMPLES / "nuggets", cache=tmp_path / "cache", judge=judging, out=tmp_path / "out",
                     **arguments)
    assert configs["api"] == configs["cli"]
    assert configs["cli"].concurrency == arguments.get("concurrency", 4)  # the options did reach the config


CALIBRATE_DEFAULTS = ([], {}, None)
CALIBRATE_CHOSEN = (
    ["--model", "openai/fake", "--api-base", "http://127.0.0.1:9/v1", "--api-key", "none", "--max-tokens", "300",
     "--threads", "1", "--kernels", "safe", "--max-doc-chars", "4000", "--on-injection", "flag",
     "--injection-detector", "rules+learned", "--concurrency", "2", "--n-boot", "50", "--seed", "3", "--sample", "2"],
    dict(model="openai/fake", api_base="http://127.0.0.1:9/v1", api_key="none", max_tokens=300, threads=1,
         kernels="safe", concurrency=2, n_boot=50, seed=3, sample="2"),
    JudgeSettings(passages=PassagePolicy(max_chars=4000), on_injection="flag", injection_detector="rules+learned"),
)


@pytest.mark.parametrize(("options", "arguments", "judging"), [CALIBRATE_DEFAULTS, CALIBRATE_CHOSEN],
                         ids=["defaults", "chosen"])
def test_the_api_and_calibrate_build_equal_configs(tmp_path, monkeypatch, options, arguments, judging):
    """`judge.calibrate(...)` and `argue-judge calibrate` on the same data with the same choices calibrate with equal
    configs (model, thresholds, passages, injection policy, sample, seed, bootstrap, concurrency) and a decision
    cache in the same place: both build it with judge.api.calibration_config."""
    from typer.testing import CliRunner

    import judge.calibration.suite as suite
    from judge.cli.app import app

    configs: dict = {}
    monkeypatch.setattr(suite, "calibrate", _capture(configs, "cli"))
    cache = tmp_path / "cache"
    result = CliRunner().invoke(app, ["calibrate", "--nuggets", str(EXAMPLES / "nuggets"), "--docs",
                                      str(EXAMPLES / "docs.jsonl"), *options, "--cache-dir", str(cache),
                                      "--out", str(tmp_path / "out")])
    assert isinstance(result.exception, _Captured), result.output
    monkeypatch.setattr(suite, "calibrate", _capture(configs, "api"))
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
    from judge.cli.app import app

    wice = tmp_path / "wice.jsonl"
    claims = [("supported", "The port doubled its traffic."), ("partially_supported", "The port doubled and grew.")]
    wice.write_text("".join(json.dumps({"id": f"w{k}", "label": label, "claim": claim, "supporting_sentences": [[0]],
                                        "evidence": ["The port doubled its traffic in 2020."]}) + "\n"
                            for k, (label, claim) in enumerate(claims)), encoding="utf-8")
    configs: dict = {}
    monkeypatch.setattr(suite, "calibrate", _capture(configs, "cli"))
    result = CliRunner().invoke(app, ["calibrate", "--wice", str(wice), "--wice-partial", partial, "--cache-dir",
                                      str(tmp_path / "cache"), "--out", str(tmp_path / "out")])
    assert isinstance(result.exception, _Captured), result.output
    monkeypatch.setattr(suite, "calibrate", _capture(configs, "api"))
    with pytest.raises(_Captured):
        api.calibrate(wice=wice, wice_partial=partial, cache=tmp_path / "cache")
    assert configs["api"].wice_partial == configs["cli"].wice_partial == partial


# ---------------------------------------------------------------------------------------------------------------
# Every command is a shell over one API call

def _leaf_commands():
    import typer.main

    from judge.cli.app import app

    root = typer.main.get_command(app)
    for name in root.list_commands(None):  # built when asked (cli.app.LazyCommands)
        root.get_command(None, name)

    def walk(command, path):
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                yield from walk(sub, (*path, name))
        else:
            yield " ".join(path), command

    return dict(walk(root, ()))


def test_every_command_names_the_api_call_behind_it():
    """The walk finds every command of the CLI (typer's own model); each must name its call in judge.api, the call
    must be public API, and the command's module must import it: a command with no API counterpart fails here."""
    import inspect

    from judge.cli.app import API_CALLS

    commands = _leaf_commands()
    assert {"eval", "score", "calibrate", "view", "merge", "cache stats", "baseline exam"} <= set(commands)
    missing = sorted(set(commands) - set(API_CALLS))
    assert not missing, f"commands without an API call in judge.cli.app.API_CALLS: {missing}"
    assert not set(API_CALLS) - set(commands), "API_CALLS names a command that does not exist"
    for name, command in commands.items():
        call = API_CALLS[name]
        assert call in api.__all__ and callable(getattr(api, call)), f"{name}: judge.api.{call} is not public"
        module = inspect.getmodule(command.callback.__wrapped__ if hasattr(command.callback, "__wrapped__")
                                   else command.callback)
        imports = [line for line in inspect.getsource(module).splitlines() if line.startswith("from judge.api import")]
        assert any(re.search(rf"\b{call}\b", line) for line in imports), \
            f"{name}: {module.__name__} does not import judge.api.{call}"


# ---------------------------------------------------------------------------------------------------------------
# Notebook-grade: a running event loop, objects instead of files, rows

def test_the_sync_api_runs_inside_a_running_event_loop(tmp_path):
    """A notebook cell runs inside the kernel's event loop, where asyncio.run refuses to start."""
    import asyncio

    from judge.testing import FakeEndpoint

    async def cell():
        with FakeEndpoint(smart_responder) as model:
            return api.evaluate(EXAMPLES / "reports", requests=EXAMPLES / "requests.jsonl",
                                docs=EXAMPLES / "docs.jsonl", nuggets=EXAMPLES / "nuggets", model="openai/fake",
                                api_base=model.api_base, api_key="none", cache=None)

    evaluation = asyncio.run(cell())
    assert sorted(evaluation.scores.runs) == ["run-cited", "run-miscited", "run-padded"]

    async def awaited():
        with FakeEndpoint(smart_responder) as model:
            return await api.evaluate_async(EXAMPLES / "reports", requests=EXAMPLES / "requests.jsonl",
                                            docs=EXAMPLES / "docs.jsonl", nuggets=EXAMPLES / "nuggets",
                                            model="openai/fake", api_base=model.api_base, api_key="none",
                                            cache=None)

    assert asyncio.run(awaited()).scores.rows() == evaluation.scores.rows()


def test_objects_and_files_judge_alike(readme_folder):
    """Reports, requests, documents and nugget banks as the package's types (or dicts) give the scores the files
    give: they are read by the same readers."""
    from judge.formats import read_nugget_banks, read_reports, read_requests
    from judge.types import Document

    reports = read_reports([EXAMPLES / "reports"])
    requests = list(read_requests(EXAMPLES / "requests.jsonl").values())
    documents = [Document(**json.loads(line)) for line in (EXAMPLES / "docs.jsonl").read_text().splitlines()]
    banks = list(read_nugget_banks([EXAMPLES / "nuggets"]).values())
    with FakeEndpoint(smart_responder) as model:
        from_objects = api.evaluate(reports, requests=requests, docs=documents, nuggets=banks, model="openai/fake",
                                    api_base=model.api_base, api_key="none", cache=None)
    from_files = api.score("argue-out/judgments.jsonl", nuggets="examples/nuggets")
    assert from_objects.scores.rows() == from_files.scores.rows()
    with pytest.raises(TypeError, match="reports"):
        api.evaluate([42], requests=requests, docs=documents, cache=None, model="openai/fake")


def test_results_convert_to_rows_and_draw_a_leaderboard(readme_folder):
    scored = api.score("argue-out/judgments.jsonl", nuggets="examples/nuggets",
                       measures=["F1", "SentencePrecision", "sentence_precision"])
    records = scored.to_records()
    assert {r["measure"] for r in records} == {"F1", "SentencePrecision"}  # an alias names the same measure
    assert set(records[0]) == {"run_id", "request_id", "measure", "value"}
    frame = scored.to_pandas(aggregate=True)
    assert list(frame.columns) == ["run_id", "request_id", "measure", "value"] and set(frame.request_id) == {"all"}
    html = scored._repr_html_()
    assert "<table>" in html and "run-cited" in html and scored.signature.short() in html
    with pytest.raises(ValueError, match="measures: .*'Recall@10'"):
        api.score("argue-out/judgments.jsonl", measures=["Recall@10"])


def test_to_pandas_without_pandas_says_how_to_get_it(readme_folder, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="pip install pandas"):
        api.score("argue-out/judgments.jsonl").to_pandas()


def test_human_gives_the_prediction_powered_table(readme_folder):
    """`human=` is the API's --human: the estimates the command writes to ppi.json."""
    judgments = api.read_judgments("argue-out/judgments.jsonl")
    human = [j.model_copy(update={"assessor": "human:a"}) for j in judgments if j.run_id != "run-padded"]
    scored = api.score(judgments, nuggets="examples/nuggets", human=human, out="scored")
    assert scored.estimates is not None and "human:" in scored.estimates.signature.short()
    rows = scored.estimates.to_records()
    assert {r["run_id"] for r in rows} == {"run-cited", "run-miscited", "run-padded"}
    written = json.loads((readme_folder / "scored" / "ppi.json").read_text())
    assert written["runs"] == rows
    assert "run-cited" in scored.estimates._repr_html_()


def test_the_quickstart_notebook_runs_top_to_bottom(tmp_path):
    """examples/quickstart.ipynb in a real Jupyter kernel (nbclient + ipykernel): a cell that raises fails the
    test, so the notebook cannot go stale. It runs where a user opens it, beside the bundled example."""
    nbformat = pytest.importorskip("nbformat", reason="the test extra installs nbclient and ipykernel")
    from nbclient import NotebookClient

    for entry in EXAMPLES.iterdir():  # the example's files, not a copy: the notebook must write none of its own
        (tmp_path / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    notebook = nbformat.read(EXAMPLES / "quickstart.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("run-cited" in page and "<table" in page for page in html)  # the leaderboard drew itself
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in EXAMPLES.iterdir())
