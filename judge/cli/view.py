"""`argue-judge view`: static HTML pages of judgments (LLM judges or human assessors)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from judge.cli import options
from judge.cli.errors import user_errors
from judge.cli.render import console
from judge.formats import DocumentStore, read_nugget_banks, read_requests
from judge.formats.judgments import ReportJudgment
from judge.judging.judgments_reader import iter_judgments
from judge.labels import CITATION_POLICIES


def view_command(
    judgments: Annotated[list[Path], typer.Argument(help="Judgments files (LLM judge or human assessors).")],
    nuggets: Annotated[list[Path] | None, typer.Option(
        "--nuggets", "-n", help="v3 nugget banks, for records that carry none, and to show attesting documents.")
    ] = None,
    requests: Annotated[Path | None, typer.Option(
        "--requests", "-r", help="Report requests (JSONL): shows each request's statement.")] = None,
    docs: Annotated[list[Path] | None, typer.Option(
        "--docs", "-d", help="Documents (JSONL): shows cited titles and highlights the evidence in the text.")
    ] = None,
    against: Annotated[list[Path] | None, typer.Option(
        "--against", help="Judgments of the same reports by another judge or assessor: adds comparison pages.")
    ] = None,
    citation_policy: Annotated[str, typer.Option(
        "--citation-policy", help="Policy for records that give decisions without outcomes.")] = "all",
    cache_dir: options.CacheDir = options.DEFAULT_CACHE,
    out: options.Out = Path("argue-view"),
    debug: options.Debug = False,
) -> None:
    """Write DIR/index.html (leaderboard, outcome histograms) and one page per report; no server, no network."""
    from judge.view import write_view  # here, not at the top: it pulls in scipy, which every command would pay

    if citation_policy not in CITATION_POLICIES:
        raise typer.BadParameter(f"choose one of {', '.join(CITATION_POLICIES)}", param_hint="--citation-policy")
    with user_errors(debug), ExitStack() as stack:
        records = _read(judgments)
        other = _read(against) if against else None
        store = stack.enter_context(DocumentStore.open(list(docs), cache_dir / "docstore")) if docs else None
        files = write_view(
            records, out, requests=read_requests(requests) if requests else None,
            banks=read_nugget_banks(list(nuggets)) if nuggets else None, documents=store, against=other,
            labels=side_labels(records, judgments, other or [], against or []),
            policy=citation_policy)  # type: ignore[arg-type]
    pages = len(files.pages)
    console.print(f"wrote {files.index} and {pages} page(s), {files.total_bytes / 1024:.0f} KiB in all",
                  highlight=False, soft_wrap=True)


def _read(paths: Sequence[Path]) -> list[ReportJudgment]:
    return [j for path in paths for j in iter_judgments(path)]


def side_labels(a: Sequence[ReportJudgment], a_paths: Sequence[Path], b: Sequence[ReportJudgment],
                b_paths: Sequence[Path]) -> tuple[str, str]:
    """Name each side by its assessor when it has one, else by its file names; never the same name twice."""
    def label(records: Sequence[ReportJudgment], paths: Sequence[Path]) -> str:
        assessors = {j.assessor for j in records}
        return assessors.pop() if len(assessors) == 1 else ", ".join(p.name for p in paths)

    first, second = label(a, a_paths), label(b, b_paths)
    if first == second:
        first, second = (f"{first} ({', '.join(str(p) for p in a_paths)})",
                         f"{second} ({', '.join(str(p) for p in b_paths)})")
    return first, second
