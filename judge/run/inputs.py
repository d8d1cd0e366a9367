"""The inputs of a run, loaded and checked once before any model call: the reports (indexed, read again from their
files when judged), the requests, the nugget banks and the document store, with the diagnostics their loading gave.

Each input is files (read here by the format readers, the edge) or domain objects already in memory (the API's
Report, Request, NuggetBank and Document objects), which are taken as they are: nothing is written to disk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judge.diagnostics import Diagnostic, Diagnostics
from judge.errors import InputError
from judge.formats import DocumentStore, citation_warnings, loader
from judge.formats.loader import Given
from judge.formats.out_apart import check_out_apart
from judge.formats.reports import ReportIndex
from judge.formats.sniff import naming_the_format
from judge.run.shards import Shard
from judge.types import Document, NuggetBank, Report, Request


@dataclass
class Inputs:
    """Everything a run reads, loaded once. Closes its document store: use it as a context manager.

    `reports` is an index (judge.formats.reports.ReportIndex): every report is checked when the inputs are loaded,
    and read again from its file when it is judged, so memory does not grow with the reports' text. A list of
    reports is accepted too (it is indexed in memory)."""

    reports: ReportIndex
    requests: dict[str, Request]
    banks: dict[str, NuggetBank]
    documents: DocumentStore
    diagnostics: Diagnostics = field(default_factory=Diagnostics)

    def __post_init__(self) -> None:
        if not isinstance(self.reports, ReportIndex):
            self.reports = ReportIndex.of(self.reports)

    @classmethod
    def load(cls, reports: Given[Report], requests: str | Path | Sequence[Request], nuggets: Given[NuggetBank] | None,
             documents: Given[Document], index_dir: Path, max_doc_bytes: int | None = None,
             shard: Shard | None = None, out: Path | None = None) -> Inputs:
        """Each input as files or objects (see the module's docstring); objects given twice (a report, a request,
        a bank) are refused as in a file, named `reports[3]`, `requests[0]`, ... `max_doc_bytes`: refuse (before
        any model call) a cited document larger than this. `shard`: keep only that shard's reports (checks and
        warnings then speak of those alone, so merging the shards' summaries gives the warnings of a single run).
        `out`: the run's output folder, refused if it is or lies inside an input folder."""
        if isinstance(requests, str | Path):
            requests = [requests]
        if out is not None:  # the input folders: objects have none
            check_out_apart(out, [p for value, kind in ((reports, Report), (nuggets or (), NuggetBank),
                                                        (documents, Document))
                                  if loader.objects(value, kind) is None for p in value])  # type: ignore[misc]
        diagnostics = Diagnostics()
        keep = (lambda report: shard.contains(report.run_id, report.request_id)) if shard else None
        with naming_the_format("a reports file"):
            index = loader.reports(reports, keep)
        with naming_the_format("a requests file"):
            known = loader.requests(requests)
        with naming_the_format("a nugget bank"):
            read = (index, known, loader.banks(nuggets))
        # The document index logs what it repairs (duplicate ids, an unreadable index): keep it for the summary.
        with diagnostics.capture_logging("judge.formats.documents", "documents"), naming_the_format("a documents file"):
            store = loader.documents(documents, index_dir)
        loaded = cls(*read, store, diagnostics)
        try:
            loaded.check(max_doc_bytes)
        except BaseException:
            loaded.close()
            raise
        if store.duplicates:  # known whether the index was built now or reused, so every run says it
            diagnostics.warn(f"{store.duplicates} duplicate doc_id line(s) in the collection; kept the first copy "
                             "of each", "documents")
        for warning in loaded.warnings():  # after the documents' own: a run's stages in DIAGNOSTIC_SOURCES order
            diagnostics.add(warning)
        return loaded

    def close(self) -> None:
        self.documents.close()

    def __enter__(self) -> Inputs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check(self, max_doc_bytes: int | None = None) -> None:
        """Fail before any model call: every report must answer a known request, and no cited document may be
        over `max_doc_bytes`."""
        for entry in self.reports.entries:
            if entry.request_id not in self.requests:
                known = ", ".join(sorted(self.requests)[:10])
                raise InputError(f"report of run '{entry.run_id}' answers unknown request '{entry.request_id}'; "
                                 f"add it to the requests file (known: {known})", entry.source)
        if max_doc_bytes is not None:
            self.documents.check_sizes(self.reports.cited, max_doc_bytes)

    def warnings(self) -> list[Diagnostic]:
        """What a run should say about its inputs (source "inputs"): empty reports (with their file and line),
        requests without a nugget bank, nuggets no report can earn, cited documents the collection lacks."""
        notes = []
        for entry in self.reports.entries:
            if not entry.sentences:
                notes.append(Diagnostic(f"{entry.source}: report of run '{entry.run_id}' for request "
                                        f"'{entry.request_id}' is empty; its precision is undefined (scored 0, "
                                        "flagged)", "inputs", file=entry.name or None, line=entry.line or None))
        for request_id in sorted({e.request_id for e in self.reports.entries} - self.banks.keys()):
            notes.append(Diagnostic(f"request '{request_id}' has no nugget bank: nugget recall is undefined (not "
                                    "zero) for its reports", "inputs", request=request_id))
        notes += self.unearnable_nuggets()
        # from the cited ids gathered when the reports were indexed, without reading the reports again
        return notes + [Diagnostic(message, "inputs") for message in citation_warnings(self.reports.cited,
                                                                                        self.documents)]

    def unearnable_nuggets(self) -> list[Diagnostic]:
        """One warning per nugget of a judged request that no report can earn: every answer is attested only by
        documents the collection lacks, so no cited document can support it, and recall on that request is capped
        below 1 for every run. (An empty collection is warned about once, by citation_warnings.)"""
        if len(self.documents) == 0:
            return []
        found = []
        for request_id in sorted({e.request_id for e in self.reports.entries} & self.banks.keys()):
            for nugget in self.banks[request_id].nuggets:
                if nugget.absence or not nugget.answers or any(not a.doc_ids for a in nugget.answers):
                    continue
                cited = list(dict.fromkeys(doc for a in nugget.answers for doc in a.doc_ids))
                if not any(doc in self.documents for doc in cited):
                    found.append(Diagnostic(
                        f"request '{request_id}': nugget '{nugget.nugget_id}' can never be earned: every answer "
                        f"cites a document missing from --docs ({', '.join(cited)}); recall on this request is "
                        "capped for every run", "inputs", request=request_id))
        return found
