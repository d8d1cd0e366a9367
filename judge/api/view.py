"""`html_view`: static HTML pages of judgments, as `argue-judge view` writes them."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from judge.api._inputs import (
    DEFAULT_CACHE,
    DocumentInputs,
    JudgmentInputs,
    NuggetInputs,
    PathLike,
    RequestInputs,
    _banks,
    _check_input,
    _check_path,
    _documents,
    _is_paths,
    _judgment_records,
    _paths,
    _requests,
)
from judge.formats.judgments import ReportJudgment
from judge.labels import CitationPolicy
from judge.settings import check
from judge.types import Document, NuggetBank, Request

if TYPE_CHECKING:
    from judge.view.render import ViewFiles


def html_view(judgments: JudgmentInputs, *, out: PathLike = "argue-view", nuggets: NuggetInputs | None = None,
              requests: RequestInputs | None = None, docs: DocumentInputs | None = None,
              against: JudgmentInputs | None = None, policy: CitationPolicy = "all",
              cache: PathLike | None = DEFAULT_CACHE) -> ViewFiles:
    """Static HTML pages of judgments (LLM judges or human assessors), as `argue-judge view` does: OUT/index.html
    (leaderboard, outcome histograms) and one page per report. `against`: judgments of the same reports by another
    judge or assessor (comparison pages). Paths or objects, as everywhere.

    >>> import judge
    >>> pages = judge.html_view("argue-out/judgments.jsonl", out="view", nuggets="examples/nuggets")
    >>> pages.index.name, len(pages.pages)
    ('index.html', 6)
    """
    from judge.view import write_view

    check("policy", policy, CitationPolicy)
    _check_path("out", out, optional=False)
    _check_path("cache", cache)
    for argument, value, kind in (("judgments", judgments, ReportJudgment), ("nuggets", nuggets, NuggetBank),
                                  ("requests", requests, Request), ("docs", docs, Document),
                                  ("against", against, ReportJudgment)):
        _check_input(argument, value, kind, optional=argument != "judgments")
    with ExitStack() as stack:
        banks = _banks("nuggets", nuggets)
        records = _judgment_records("judgments", judgments, banks)
        other = _judgment_records("against", against, banks) if against is not None else None
        known = _requests("requests", requests)
        found = _documents("docs", docs, cache)
        store = stack.enter_context(found) if found is not None else None
        labels = _side_labels(records, judgments, other or [], against)
        return write_view(records, out, requests=known, banks=banks or None, documents=store, against=other,
                          labels=labels, policy=policy)


def _side_labels(a: Sequence[ReportJudgment], a_given: Any, b: Sequence[ReportJudgment], b_given: Any
                 ) -> tuple[str, str]:
    """Name each side by its assessor when it has one, else by its file names; never the same name twice."""
    def label(records: Sequence[ReportJudgment], given: Any, fallback: str) -> tuple[str, str]:
        paths = _paths(given) if _is_paths(given) else []
        names = ", ".join(p.name for p in paths) or fallback
        assessors = {j.assessor for j in records}
        return (assessors.pop() if len(assessors) == 1 else names), ", ".join(str(p) for p in paths) or fallback

    (first, first_where), (second, second_where) = label(a, a_given, "judgments"), label(b, b_given, "against")
    if first == second:
        first, second = f"{first} ({first_where})", f"{second} ({second_where})"
    return first, second

