"""Two judgments of one report pair only when they judge the same report: the same sentences, in order.

Human judgments are compared with the judge's (`--human` for prediction-powered estimates, `calibrate --human
--judged`, `view --against`) report by report and sentence by sentence; a record of another version of a report
(a sentence added, split or reworded) would pair its labels with the wrong sentences without a word."""

from __future__ import annotations

from collections.abc import Sequence

from judge.errors import InputError
from judge.formats.judgments import ReportJudgment


def sentence_texts(record: ReportJudgment) -> tuple[str, ...]:
    return tuple(s.text for s in sorted(record.sentences, key=lambda s: s.index))


def difference(record: ReportJudgment, other: Sequence[str] | int) -> str | None:
    """Why `record` does not judge the report `other` stands for (its sentences' texts, or only their number when
    the texts are not at hand); None when it does."""
    mine = sentence_texts(record)
    count = other if isinstance(other, int) else len(other)
    if len(mine) != count:
        return f"it has {len(mine)} sentence(s) where the judge's report has {count}"
    if not isinstance(other, int):
        for number, (a, b) in enumerate(zip(mine, other), start=1):
            if a != b:
                return f"its sentence {number} reads {a[:40]!r} where the judge's reads {b[:40]!r}"
    return None


def check_same_report(record: ReportJudgment, other: Sequence[str] | int, name: str, line: int | None,
                      other_name: str = "the judge's judgments") -> None:
    """InputError naming the file and line of `record` when it judges another version of the report."""
    why = difference(record, other)
    if why is not None:
        raise InputError(f"run {record.run_id} request {record.request_id} is not the report {other_name} judged: "
                         f"{why}; pair judgments of the same reports", name, line)
