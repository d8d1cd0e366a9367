"""The nugget commands on the command line: what they refuse, and that they refuse it the way eval does (one line,
the exit code eval gives) — an option --accept would ignore, a folder another command is writing, a setting the
API's rules refuse."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.cli.errors import EXIT_INPUT
from judge.testing import FakeEndpoint, smart_responder
from tests.test_nuggets import BANKS, DOCS, REQUESTS, held_by_another_process, reviewed_candidates

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
runner = CliRunner()


def _lines(result) -> list[str]:
    return [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]


@pytest.mark.parametrize("extra", [["--reports", str(EXAMPLES / "reports")],
                                   ["--model", "openai/gpt-4o-mini", "--docs", str(DOCS)],
                                   ["--requests", str(REQUESTS), "--concurrency", "2", "--no-cache"]])
def test_accept_refuses_the_options_it_would_ignore(tmp_path, extra):
    reviewed = reviewed_candidates(tmp_path)
    result = runner.invoke(app, ["nuggets", "pool", "--nuggets", str(BANKS), "--accept", str(reviewed),
                                 "--out", str(tmp_path / "extended"), *extra])
    assert result.exit_code == EXIT_INPUT, result.output
    lines = _lines(result)
    assert len(lines) == 1 and "would be ignored" in lines[0], lines
    assert all(option in lines[0] for option in extra if option.startswith("--")), lines
    assert not (tmp_path / "extended").exists()


def test_accept_alone_writes_the_extended_banks(tmp_path):
    reviewed = tmp_path / "reviewed.jsonl"
    reviewed.write_text(json.dumps({"request_id": "ex-101", "nugget_id": "ex-101-q1", "answer": "2020",
                                    "doc_ids": ["ex-d01"], "accept": True}) + "\n")
    result = runner.invoke(app, ["nuggets", "pool", "--nuggets", str(BANKS), "--accept", str(reviewed),
                                 "--out", str(tmp_path / "extended")], env={"ARGUE_JUDGE_API_KEY": "from-env"})
    assert result.exit_code == 0, result.output
    assert "wrote 2 banks" in result.output


def test_eval_and_the_nugget_commands_refuse_a_held_folder_alike(tmp_path):
    """The same one line and exit code as eval's when another command writes the folder."""
    out = tmp_path / "out"
    with FakeEndpoint(smart_responder) as model, held_by_another_process(out) as pid:
        common = ["--model", "openai/fake", "--api-base", model.api_base, "--api-key", "none", "--no-cache"]
        runs = {
            "eval": ["eval", str(EXAMPLES / "reports"), "--requests", str(REQUESTS), "--docs", str(DOCS),
                     "--nuggets", str(BANKS), "--out", str(out), *common],
            "create": ["nuggets", "create", "--requests", str(REQUESTS), "--docs", str(DOCS), "--out", str(out),
                       *common],
            "pool": ["nuggets", "pool", "--nuggets", str(BANKS), "--reports", str(EXAMPLES / "reports"),
                     "--requests", str(REQUESTS), "--docs", str(DOCS), "--out", str(out / "candidates.jsonl"),
                     *common],
            "accept": ["nuggets", "pool", "--nuggets", str(BANKS), "--accept", str(reviewed_candidates(tmp_path)),
                       "--out", str(out)],
        }
        results = {name: runner.invoke(app, args) for name, args in runs.items()}
    for name, result in results.items():
        lines = [line for line in result.stderr.splitlines() if line.strip()]  # eval's progress is on stdout
        assert result.exit_code == results["eval"].exit_code == EXIT_INPUT, (name, result.output)
        assert len(lines) == 1 and re.search(rf"argue-judge eval \(pid {pid}\) is writing .*out", lines[0]), \
            (name, lines)
    assert [p.name for p in out.iterdir()] == [".argue-lock"]


@pytest.mark.parametrize(("args", "message"), [
    (["--format", "xml"], "choose one of v3, nuggetizer"),
    (["--max-nuggets", "0"], r"0 is not a number in \[1, 1000000\]"),
    (["--concurrency", "2000"], r"2000 is not a number in \[1, 1024\]"),
])
def test_create_refuses_by_the_rules_the_api_checks(tmp_path, args, message):
    result = runner.invoke(app, ["nuggets", "create", "--requests", str(REQUESTS), "--docs", str(DOCS),
                                 "--out", str(tmp_path / "banks"), "--no-cache", *args])
    lines = _lines(result)
    assert result.exit_code == EXIT_INPUT and len(lines) == 1 and re.search(message, lines[0]), lines
