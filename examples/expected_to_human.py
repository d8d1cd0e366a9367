"""Write the bundled example's designed outcomes (expected_outcomes.json) as human judgments records.

expected_outcomes.json gives, per run and request, each sentence's designed outcome (null: past the length
limit) and the nuggets each report earns; it is not a judgments file. This script takes the sentences, citations
and nugget bank from a judge's judgments of the same reports (e.g. argue-out/judgments.jsonl of `argue-judge
eval examples/reports ...`) and writes one record per report as an assessor would: `assessor: human:expected`,
outcomes per sentence, and each earned nugget's answers on the report's first sentence whose outcome earns
(#3, or #8 for an absence nugget). With --keep, only those reports (run/request) are written: a human sample.

    python -m examples.expected_to_human argue-out/judgments.jsonl human.jsonl [--keep run-cited/ex-101 ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from judge import read_judgments
from judge.formats.judgments import EarnedAnswer, ReportJudgment, SentenceJudgment, write_judgments

EXPECTED = Path(__file__).resolve().parent / "expected_outcomes.json"


def human_record(judged: ReportJudgment, outcomes: list[int | None], earned: list[str]) -> ReportJudgment:
    if len(outcomes) != len(judged.sentences):
        raise ValueError(f"{judged.run_id}/{judged.request_id}: {len(outcomes)} designed outcomes for "
                         f"{len(judged.sentences)} judged sentences")
    bank = {n.nugget_id: n for n in judged.nuggets or []}
    sentences = []
    for s, outcome in zip(judged.sentences, outcomes, strict=True):
        sentences.append(SentenceJudgment(index=s.index, text=s.text, citations=s.citations,
                                          status="truncated" if outcome is None else "judged", outcome=outcome))
    for nugget_id in earned:
        nugget = bank[nugget_id]
        wanted = 8 if nugget.absence else 3
        target = next(s for s in sentences if s.outcome == wanted)
        answers = [None] if nugget.absence else nugget.answers
        target.earned.extend(EarnedAnswer(nugget_id=nugget_id, answer=a) for a in answers)
    return ReportJudgment(run_id=judged.run_id, request_id=judged.request_id, team_id=judged.team_id,
                          assessor="human:expected", sentences=sentences, nuggets=judged.nuggets)


def convert(judgments: Path, keep: set[str] | None = None, expected: Path = EXPECTED) -> list[ReportJudgment]:
    design = json.loads(expected.read_text(encoding="utf-8"))
    records = []
    for judged in read_judgments(judgments):
        if keep is not None and f"{judged.run_id}/{judged.request_id}" not in keep:
            continue
        records.append(human_record(judged, design["outcomes"][judged.run_id][judged.request_id],
                                    design["earned"][judged.run_id][judged.request_id]))
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("judgments", type=Path, help="a judge's judgments of examples/reports")
    parser.add_argument("out", type=Path, help="the human judgments file to write")
    parser.add_argument("--keep", nargs="*", help="only these reports, as run/request")
    args = parser.parse_args()
    records = convert(args.judgments, set(args.keep) if args.keep else None)
    write_judgments(args.out, records)
    print(f"wrote {len(records)} human judgments records to {args.out}")


if __name__ == "__main__":
    main()
