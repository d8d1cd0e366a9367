"""Diagnostics stay linear in the number of reports and a repeated warning is one console line.

A run with 100,000 empty reports adds 100,000 warnings; `Diagnostics.add` tested membership on a list, so the
run was quadratic (10,000 empty reports ~90 s, 100,000 did not finish in 120 s). The test counts comparisons
instead of timing them (deterministic on a loaded machine): a list compares each new message with every earlier
one, an ordered set (a dict) with none but the ones whose hash it shares.
"""

from __future__ import annotations

from pathlib import Path

from judge.cli import render
from judge.diagnostics import Diagnostic, Diagnostics


def _empty_report_warning(i: int) -> str:
    return f"reports/run-{i % 100}.jsonl:{i // 100 + 1}: report of run 'run-{i % 100}' for request 'q{i // 100}' " \
           "is empty; its precision is undefined (scored 0, flagged)"


def test_adding_many_diagnostics_is_linear(monkeypatch):
    comparisons = 0
    equal = Diagnostic.__eq__

    def counted(self: Diagnostic, other: object) -> bool:
        nonlocal comparisons
        comparisons += 1
        return equal(self, other)

    monkeypatch.setattr(Diagnostic, "__eq__", counted)
    n = 5_000
    diagnostics = Diagnostics(Diagnostic(_empty_report_warning(i), "inputs") for i in range(n))
    diagnostics.warn(_empty_report_warning(0), "inputs")  # said again: still kept once
    assert len(diagnostics) == n
    assert comparisons < n // 10, comparisons  # a list made n * (n - 1) / 2 = 12.5 million


def test_same_message_is_kept_once_in_order_of_first_appearance():
    diagnostics = Diagnostics()
    for message in ["b", "a", "b", "c", "a"]:
        diagnostics.warn(message, "inputs")
    diagnostics.note("b", "inputs")  # another level: another diagnostic
    assert diagnostics.messages() == ["b", "a", "c", "b"]
    assert diagnostics.as_json()[0] == {"message": "b", "source": "inputs", "level": "warning"}


def test_a_warning_repeated_many_times_is_one_console_line_with_a_count(capsys):
    diagnostics = Diagnostics()
    for i in range(100_000):
        diagnostics.warn(_empty_report_warning(i), "inputs")
    diagnostics.warn("request 'q1' has no nugget bank: nugget recall is undefined (not zero) for its reports",
                     "inputs")
    diagnostics.note("3 cache entries were resealed", "cache")
    assert len(diagnostics) == 100_002  # every message is kept for run-summary.json
    kinds = diagnostics.collapsed()
    assert [count for _, count in kinds] == [100_000, 1, 1]
    render.print_diagnostics(diagnostics, Path("run-summary.json"))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0].startswith("note: 3 cache entries")
    assert lines[1].startswith("warning: reports/run-0.jsonl:1: report of run 'run-0'")
    assert lines[1].endswith("(and 99,999 more like it, see run-summary.json)")
    assert lines[2].startswith("warning: request 'q1' has no nugget bank")
