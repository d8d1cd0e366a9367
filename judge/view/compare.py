"""Two judgments files of the same reports side by side: where do the two judges (or judge and assessor) part?

Sentences are paired by index (their text must match: otherwise these are not the same reports), decisions by
what they asked (`DecisionView.key`: the decision and the documents shown). Cohen's kappa per decision and on
the outcome is computed with the calibration suite's statistics, over every paired report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judge.calibration.stats import cohen_kappa, confusion_matrix
from judge.chart import Outcome
from judge.errors import InputError
from judge.judging import decisions
from judge.view.model import DecisionView, ReportView, SentenceView, Site, page_name

VERDICTS = ("yes", "no", "undecided", "failed")


@dataclass(frozen=True)
class DecisionPair:
    key: tuple[str, ...]
    a: DecisionView | None
    b: DecisionView | None

    @property
    def both(self) -> bool:
        return self.a is not None and self.b is not None

    @property
    def agree(self) -> bool:
        return self.both and self.a.verdict == self.b.verdict  # type: ignore[union-attr]


@dataclass(frozen=True)
class SentencePair:
    a: SentenceView
    b: SentenceView
    decisions: tuple[DecisionPair, ...]

    @property
    def outcome_agree(self) -> bool:
        return (self.a.outcome, self.a.status) == (self.b.outcome, self.b.status)

    @property
    def disagree(self) -> bool:
        """Different outcomes, or a decision both asked with different verdicts."""
        return not self.outcome_agree or any(p.both and not p.agree for p in self.decisions)


@dataclass(frozen=True)
class ReportPair:
    a: ReportView
    b: ReportView
    sentences: tuple[SentencePair, ...]
    file: str

    @property
    def disagreements(self) -> int:
        return sum(s.disagree for s in self.sentences)


@dataclass(frozen=True)
class KappaRow:
    label: str
    items: int          # pairs judged by both sides
    agreeing: int
    kappa: float | None  # None: undefined (no items, or both sides put everything in one class)


@dataclass(frozen=True)
class Comparison:
    a_label: str
    b_label: str
    pairs: tuple[ReportPair, ...]
    only_a: tuple[ReportView, ...]
    only_b: tuple[ReportView, ...]
    kappas: tuple[KappaRow, ...]


def compare(a: Site, b: Site, a_label: str, b_label: str, folder: str = "compare") -> Comparison:
    """Pair the reports of two sites by (run, request). InputError when none pair, or when paired reports
    have different sentences."""
    b_reports = {(r.run_id, r.request_id): r for r in b.reports}
    a_keys = {(r.run_id, r.request_id) for r in a.reports}
    pairs = []
    for report in a.reports:
        other = b_reports.get((report.run_id, report.request_id))
        if other is not None:
            pairs.append(ReportPair(report, other, _pair_sentences(report, other),
                                    page_name(folder, report.run_id, report.request_id)))
    if not pairs:
        raise InputError("--against: no report (run_id, request_id) occurs in both judgments sets; "
                         "compare judgments of the same reports")
    return Comparison(
        a_label=a_label, b_label=b_label, pairs=tuple(pairs),
        only_a=tuple(r for r in a.reports if (r.run_id, r.request_id) not in b_reports),
        only_b=tuple(r for r in b.reports if (r.run_id, r.request_id) not in a_keys),
        kappas=tuple(_kappas(pairs)),
    )


def _pair_sentences(a: ReportView, b: ReportView) -> tuple[SentencePair, ...]:
    where = f"run {a.run_id} request {a.request_id}"
    if len(a.sentences) != len(b.sentences):
        raise InputError(f"--against: {where} has {len(a.sentences)} sentences in one judgments set and "
                         f"{len(b.sentences)} in the other; compare judgments of the same reports")
    pairs = []
    for sa, sb in zip(a.sentences, b.sentences):
        if sa.text != sb.text:
            raise InputError(f"--against: {where} sentence {sa.number} differs between the judgments sets "
                             f"({sa.text[:40]!r} vs {sb.text[:40]!r}); compare judgments of the same reports")
        pairs.append(SentencePair(sa, sb, _pair_decisions(sa.decisions, sb.decisions)))
    return tuple(pairs)


def _pair_decisions(a: Sequence[DecisionView], b: Sequence[DecisionView]) -> tuple[DecisionPair, ...]:
    # First record per key on each side; a side that did not ask a question shows an empty cell.
    by_key_b: dict[tuple[str, ...], DecisionView] = {}
    for d in b:
        by_key_b.setdefault(d.key, d)
    pairs, used = [], set()
    for d in a:
        if d.key in used:
            continue
        used.add(d.key)
        pairs.append(DecisionPair(d.key, d, by_key_b.get(d.key)))
    pairs += [DecisionPair(k, None, d) for k, d in by_key_b.items() if k not in used]
    return tuple(pairs)


def _kappa_row(label: str, a: list[str], b: list[str], labels: Sequence[str]) -> KappaRow:
    kappa = cohen_kappa(confusion_matrix(a, b, labels)) if a else None
    return KappaRow(label, len(a), sum(x == y for x, y in zip(a, b)), kappa)


def _kappas(pairs: Sequence[ReportPair]) -> list[KappaRow]:
    rows = []
    sentence_pairs = [s for p in pairs for s in p.sentences if s.a.scored and s.b.scored]
    outcomes = [str(int(n)) for n in Outcome]
    rows.append(_kappa_row(f"outcome (#1-#{len(Outcome)})", [str(s.a.outcome) for s in sentence_pairs],
                           [str(s.b.outcome) for s in sentence_pairs], outcomes))
    rows.append(_kappa_row("value (+ / \u2212 / 0)", [s.a.css for s in sentence_pairs],
                           [s.b.css for s in sentence_pairs], ("pos", "neg", "neu")))
    for decision in decisions.REGISTRY.names:
        both = [d for p in pairs for s in p.sentences for d in s.decisions if d.both and d.key[0] == decision]
        if both:
            rows.append(_kappa_row(decision, [d.a.verdict for d in both],  # type: ignore[union-attr]
                                   [d.b.verdict for d in both], VERDICTS))  # type: ignore[union-attr]
    return rows
