"""Ids with a tab or a line break never reach a TSV output.

A run id with a tab used to break every row of scores.tsv (103 of 103 rows lost their 4-field shape). Each
reader refuses such an id as an input error naming file:line; each TSV writer (write_scores, write_leaderboard:
every TSV the package writes goes through judge.formats.scores.tsv_row and its tsv_line, which a source scan
below checks)
refuses a field that would break its rows and leaves the output as it was.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.adapters.autoargue import read_auto_argue
from judge.cli.app import app
from judge.errors import InputError
from judge.formats import read_nugget_banks, read_requests
from judge.formats.reports import read_reports
from judge.formats.scores import ScoreRow, write_leaderboard, write_scores
from judge.judging.judgments_reader import iter_judgments

PACKAGE = Path(__file__).resolve().parents[1] / "judge"
EXAMPLES = PACKAGE.parent / "examples"
BREAKERS = ["\t", "\n", "\r", "\u2028", "\x0b"]
GOOD_REPORT = json.loads((EXAMPLES / "reports" / "run-cited.jsonl").read_text().splitlines()[0])


def _ids(breaker: str) -> str:
    return {"\t": "tab", "\n": "newline", "\r": "cr", "\u2028": "line-separator", "\x0b": "vertical-tab"}[breaker]


def _jsonl(tmp_path: Path, name: str, *records: dict) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _with(record: dict, dotted: str, value: str) -> dict:
    copy = json.loads(json.dumps(record))
    *parents, last = dotted.split(".")
    target = copy
    for key in parents:
        target = target[key]
    target[last] = value
    return copy


@pytest.mark.parametrize("breaker", BREAKERS, ids=_ids)
@pytest.mark.parametrize("field", ["metadata.run_id", "metadata.topic_id"])
def test_report_ids_that_would_break_a_row_are_refused_with_file_and_line(field, breaker, tmp_path):
    path = _jsonl(tmp_path, "run.jsonl", GOOD_REPORT, _with(GOOD_REPORT, field, f"run{breaker}x"))
    with pytest.raises(InputError, match="break the tab-separated outputs") as raised:
        read_reports(path)
    assert (raised.value.path, raised.value.line) == (str(path), 2)


def test_request_and_nugget_ids_with_a_tab_are_refused(tmp_path):
    request = json.loads((EXAMPLES / "requests.jsonl").read_text().splitlines()[0])
    requests = _jsonl(tmp_path, "requests.jsonl", request, {**request, "request_id": "ex\t9"})
    with pytest.raises(InputError, match="tab") as raised:
        read_requests(requests)
    assert raised.value.line == 2
    bank = json.loads((EXAMPLES / "nuggets" / "nuggets_ex-101.v3.json").read_text())
    nuggets = tmp_path / "bank.json"
    nuggets.write_text(json.dumps({**bank, "query_id": "ex\n101"}))
    with pytest.raises(InputError, match="line break"):
        read_nugget_banks([nuggets])


@pytest.mark.parametrize("breaker", BREAKERS, ids=_ids)
def test_judgments_ids_with_a_tab_are_refused_with_file_and_line(breaker, tmp_path):
    good = {"run_id": "r", "request_id": "q", "sentences": []}
    path = _jsonl(tmp_path, "judgments.jsonl", good, {**good, "run_id": f"r{breaker}2"})
    with pytest.raises(InputError, match="tab or a line break") as raised:
        list(iter_judgments(path))
    assert (raised.value.path, raised.value.line) == (str(path), 2)


def test_auto_argue_import_refuses_a_run_id_with_a_tab(tmp_path):
    record = {"report": {"metadata": {"run_id": "a\tb", "topic_id": "ex-101"}}, "judgments": []}
    path = _jsonl(tmp_path, "auto-argue.jsonl", record)
    banks = read_nugget_banks([EXAMPLES / "nuggets"])
    with pytest.raises(InputError, match="tab") as raised:
        read_auto_argue(path, banks)
    assert raised.value.line == 1


@pytest.mark.parametrize("breaker", BREAKERS, ids=_ids)
def test_every_tsv_writer_refuses_a_field_that_breaks_its_rows(breaker, tmp_path):
    scores, board = tmp_path / "scores.tsv", tmp_path / "leaderboard.tsv"
    scores.write_text("previous\n")
    with pytest.raises(InputError, match="tab or a line break"):
        write_scores(scores, [ScoreRow("ok", "q", "F1", 0.5), ScoreRow(f"bad{breaker}run", "q", "F1", 0.5)], "sig")
    with pytest.raises(InputError, match="tab or a line break"):
        write_leaderboard(board, ["run_id", "F1"], [["ok", "0.5"], [f"bad{breaker}run", "0.5"]], "sig")
    assert scores.read_text() == "previous\n" and not board.exists()  # left as they were
    assert list(tmp_path.iterdir()) == [scores]  # no temporary file left behind


def test_every_tsv_writer_of_the_package_goes_through_tsv_row():
    """A source scan: a tab joined or formatted into text anywhere else would be a TSV writer that escaped the
    guard. Tabs inside regular expressions (prompt parsing, whitespace classes) are not writers."""
    writers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            code = line.split("#", 1)[0]
            if re.search(r'"\\t"\.join|\\t\{|\}\\t|csv\.writer|delimiter=', code):
                writers.append(f"{path.relative_to(PACKAGE)}:{number}")
    assert writers == [f"formats/_jsonl.py:{_line_of_tsv_line()}"], writers


def _line_of_tsv_line() -> int:
    lines = (PACKAGE / "formats" / "_jsonl.py").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("def tsv_line("))
    return next(i for i, line in enumerate(lines[start:], start=start + 1) if '"\\t".join' in line)


def test_eval_refuses_a_run_id_with_a_tab_before_any_model_call(tmp_path, endpoint):
    reports = _jsonl(tmp_path, "run.jsonl", _with(GOOD_REPORT, "metadata.run_id", "run\tcited"))
    result = CliRunner().invoke(app, [
        "eval", str(reports), "--requests", str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl"),
        "--model", "openai/fake", "--api-base", endpoint.api_base, "--api-key", "x",
        "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "out")])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert f"{reports}:1:" in lines[0] and "metadata.run_id" in lines[0]
    assert endpoint.calls == 0 and not (tmp_path / "out" / "scores.tsv").exists()
