"""Warnings about loaded inputs that are legal but almost surely not what the user meant.

An evaluation over an empty collection, or over reports whose citations name none of its documents, runs to the
end and scores every cited sentence unsupported: a silent zero. These checks turn that into words before any
model call. They return plain strings (the caller shows them on the console and writes them to the run summary)
and never raise: the inputs are valid, only suspicious.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Protocol

from judge.types import Report

_EXAMPLES = 3


class _Collection(Protocol):
    empty_sources: tuple[str, ...]

    def __contains__(self, doc_id: object) -> bool: ...

    def __len__(self) -> int: ...


def input_warnings(reports: Iterable[Report], documents: _Collection) -> list[str]:
    """Empty document files, an empty collection, and citations to document ids the collection lacks."""
    cited: dict[str, None] = {}  # ordered set: examples come out in report order
    for report in reports:
        for sentence in report.sentences:
            cited.update(dict.fromkeys(sentence.citations))
    return citation_warnings(cited, documents)


def citation_warnings(cited: Collection[str], documents: _Collection) -> list[str]:
    """`input_warnings` from the cited document ids alone (distinct, in order of first citation), for a caller
    that has them already (judge.formats.reports.ReportIndex.cited) and need not read the reports again."""
    notes = [f"{name}: the documents file holds no documents" for name in documents.empty_sources]
    if len(documents) == 0:
        notes.append(f"the document collection is empty: all {len(cited)} cited document ids are unknown, so every "
                     "cited sentence will be judged unsupported; check --docs")
        return notes
    unknown = [doc_id for doc_id in cited if doc_id not in documents]
    if not unknown:
        return notes
    examples = ", ".join(repr(d) for d in unknown[:_EXAMPLES]) + (", ..." if len(unknown) > _EXAMPLES else "")
    if len(unknown) == len(cited):
        notes.append(f"none of the {len(cited)} cited document ids is in the document collection (e.g. {examples}): "
                     "every cited sentence will be judged unsupported; is --docs the collection the runs cite?")
    else:
        notes.append(f"{len(unknown)} of {len(cited)} cited document ids are not in the document collection "
                     f"(e.g. {examples}); citations of them cannot support their sentences")
    return notes
