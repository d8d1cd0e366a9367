"""ARGUE's measures and argue-judge's bookkeeping counts (Mayfield et al., "On the Evaluation of
Machine-Generated Reports", SIGIR 2024), each with its per-report statistics."""

from __future__ import annotations

from collections import defaultdict
from typing import ClassVar

from judge.chart import ANSWERS_NUGGET, PRECISION_DENOMINATOR, SUPPORTS_CITATION, Outcome, outcome_list
from judge.metrics.facts import ReportFacts, cited_docs
from judge.metrics.measure import Count, Harmonic, ParamValue, Ratio, Stats, register

ARGUE = "ARGUE (Mayfield et al., SIGIR 2024)"


class _SentencePrecision(Ratio):
    """ARGUE sentence precision: (#3 + #8) / (#1 + #3 + #5 + #7 + #8) over judged sentences with an outcome.

    Source: Mayfield et al., "On the Evaluation of Machine-Generated Reports", SIGIR 2024. A report whose
    denominator is empty scores 0.0 and is flagged (PrecisionUndefined = 1, plus a warning).
    """

    NAME = "SentencePrecision"
    SOURCE = ARGUE
    EMPTY = 0.0
    EMPTY_NOTE = (f"no report has a sentence with outcome {outcome_list(PRECISION_DENOMINATOR)}; micro sentence "
                  "precision undefined")

    def stats(self, facts: ReportFacts) -> Stats:
        return facts.precision_parts


class _NuggetRecall(Ratio):
    """ARGUE nugget recall: earned nuggets / nuggets of the request; weighted: vital 2, okay 1.

    Source: Mayfield et al., SIGIR 2024. A nugget is earned through sentences whose supporting cited documents
    attest the answer (outcome #3), or by outcome #8 for an absence nugget; all of the request's nuggets count.
    NaN without a nugget bank or with an empty one. (Auto-ARGUE's autoargue.nugget_coverage differs: see autoargue.py.)
    """

    NAME = "NuggetRecall"
    PARAMS: ClassVar[dict[str, ParamValue]] = {"micro": False, "weighted": False}
    SOURCE = ARGUE

    def stats(self, facts: ReportFacts) -> Stats | None:
        return facts.recall_parts(self.weighted)


class _F1(Harmonic):
    """Harmonic mean of sentence precision and (weighted) nugget recall; 0 when both are 0; NaN if recall is.

    Source: ARGUE precision and recall (Mayfield et al., SIGIR 2024) combined as an F-measure. Macro F1 is the
    mean of per-report F1; micro F1 the harmonic mean of micro precision and micro recall. (Auto-ARGUE's
    `autoargue.f1` combines autoargue.sentence_support and autoargue.nugget_coverage instead.)
    """

    NAME = "F1"
    PARAMS: ClassVar[dict[str, ParamValue]] = {"micro": False, "weighted": False}
    SOURCE = ARGUE

    def parts(self) -> tuple[Ratio, Ratio]:
        return SentencePrecision, NuggetRecall(weighted=self.weighted)  # type: ignore[return-value]


class _SentenceSupport(Ratio):
    """argue-judge's outcome-based sentence support: cited judged sentences with outcome 2 or 3 / those with
    outcome 1, 2 or 3. Cited sentences with an uncited outcome (4-8) are excluded (and warned about).
    NaN when the report has no such sentence. Close to, but not, Auto-ARGUE's autoargue.sentence_support
    (Walden et al. 2025), whose denominator also counts uncited sentences that need a citation.
    """

    NAME = "SentenceSupport"
    SOURCE = "argue-judge, after Auto-ARGUE sentence_support (Walden et al. 2025)"

    def stats(self, facts: ReportFacts) -> Stats:
        return facts.outcome_support_parts


class _CitationSupport(Ratio):
    """Fraction of (sentence, cited document) pairs judged supporting, among pairs with a decision.

    Pairs are the distinct cited documents of each judged sentence with an outcome. A pair is decided when a
    `supports_citation` DecisionRecord with a non-None verdict covers the document: the record's `doc_ids`
    (a 'joint' decision over several documents gives each of them its verdict), or every cited document when
    `doc_ids` is empty. A pair is supported when any decision covering it says True. NaN when no pair is
    decided. After Auto-ARGUE's `autoargue.citation_support` (Walden et al. 2025), whose denominator is every
    citation.
    """

    NAME = "CitationSupport"
    SOURCE = "argue-judge, after Auto-ARGUE citation_support (Walden et al. 2025)"

    def stats(self, facts: ReportFacts) -> Stats:
        yes = decided = 0
        for s in facts.scored:
            docs = cited_docs(s)
            verdicts: dict[str, set[bool]] = defaultdict(set)
            for d in s.decisions:
                if d.decision == SUPPORTS_CITATION and d.verdict is not None:
                    for doc in (set(d.doc_ids) & set(docs)) if d.doc_ids else docs:
                        verdicts[doc].add(d.verdict)
            decided += len(verdicts)
            yes += sum(1 for v in verdicts.values() if True in v)
        return yes, decided


class _CitationRelevance(Ratio):
    """Fraction of cited (sentence, document) pairs judged relevant -- a judgments-only approximation.

    The pairs are the distinct cited documents of every judged sentence (with an outcome) that has at least one
    DecisionRecord; a pair is relevant iff its sentence has an `answers_nugget` DecisionRecord (whatever its
    verdict), because the walker asks that question only when the sentence's cited documents attest some
    candidate nugget. So relevance is decided per sentence, and a sentence that never reached the nugget
    question (e.g. outcome 1) counts as not relevant. NaN when there is no pair. Auto-ARGUE's exact
    `citation_relevance` (Walden et al. 2025), from the bank's references, is `autoargue.citation_relevance`.
    """

    NAME = "CitationRelevance"
    SOURCE = "argue-judge approximation of Auto-ARGUE citation_relevance (Walden et al. 2025)"

    def stats(self, facts: ReportFacts) -> Stats:
        relevant = pairs = 0
        for s in facts.scored:
            if s.citations and s.decisions:
                docs = len(cited_docs(s))
                pairs += docs
                relevant += docs if any(d.decision == ANSWERS_NUGGET for d in s.decisions) else 0
        return relevant, pairs


class _Bookkeeping(Count):
    SOURCE = "argue-judge bookkeeping (ARGUE outcome histogram, Mayfield et al., SIGIR 2024)"

    def stats(self, facts: ReportFacts) -> Stats:
        return (float(_BOOKKEEPING[self.NAME](facts)),)


class _Sentences(_Bookkeeping):
    """Number of sentences in the report (judged + truncated + failed + undetermined)."""

    NAME = "Sentences"


class _Judged(_Bookkeeping):
    """Sentences with status 'judged' and an outcome: the ones scored."""

    NAME = "Judged"


class _Truncated(_Bookkeeping):
    """Sentences beyond the report length limit (status 'truncated'): not scored."""

    NAME = "Truncated"


class _Failed(_Bookkeeping):
    """Sentences whose judging failed (status 'failed'): not scored."""

    NAME = "Failed"


class _Undetermined(_Bookkeeping):
    """Sentences with status 'undetermined', or status 'judged' without an outcome: not scored."""

    NAME = "Undetermined"


class _Nuggets(_Bookkeeping):
    """Nuggets of the request (0 without a nugget bank)."""

    NAME = "Nuggets"


class _NuggetsEarned(_Bookkeeping):
    """Nuggets the report earned (each counted once)."""

    NAME = "NuggetsEarned"


class _PrecisionUndefined(_Bookkeeping):
    """1 if the report's sentence precision had an empty denominator (and was set to 0.0), else 0."""

    NAME = "PrecisionUndefined"


_BOOKKEEPING = {
    "Sentences": lambda f: len(f.judgment.sentences),
    "Judged": lambda f: f.status_counts["judged"],
    "Truncated": lambda f: f.status_counts["truncated"],
    "Failed": lambda f: f.status_counts["failed"],
    "Undetermined": lambda f: f.status_counts["undetermined"],
    "Nuggets": lambda f: len(f.nuggets or {}),
    "NuggetsEarned": lambda f: len(f.earned),
    "PrecisionUndefined": lambda f: 1 if f.precision_undefined else 0,
}


class OutcomeCount(Count):
    """Number of scored sentences with ARGUE outcome `outcome` (1..8; Mayfield et al., SIGIR 2024, Fig. 2)."""

    NAME = "OutcomeCount"
    PARAMS: ClassVar[dict[str, ParamValue]] = {"outcome": 0}
    SOURCE = ARGUE

    def __init__(self, *, outcome: int = 0, **params: ParamValue):
        super().__init__(outcome=outcome, **params)

    def _validate(self) -> None:
        if self._params["outcome"] not in {int(o) for o in Outcome}:
            raise ValueError(f"measure OutcomeCount needs outcome=1..{len(Outcome)}, not "
                             f"outcome={self._params['outcome']!r}")

    @property
    def outcome(self) -> Outcome:
        return Outcome(self._params["outcome"])

    def stats(self, facts: ReportFacts) -> Stats:
        return (float(facts.histogram[self.outcome]),)


SentencePrecision = _SentencePrecision()
NuggetRecall = _NuggetRecall()
F1 = _F1()
SentenceSupport = _SentenceSupport()
CitationSupport = _CitationSupport()
CitationRelevance = _CitationRelevance()
Sentences = _Sentences()
Judged = _Judged()
Truncated = _Truncated()
Failed = _Failed()
Undetermined = _Undetermined()
Nuggets = _Nuggets()
NuggetsEarned = _NuggetsEarned()
PrecisionUndefined = _PrecisionUndefined()

register(_SentencePrecision, [SentencePrecision], {"sentence_precision": SentencePrecision})
register(_NuggetRecall, [NuggetRecall, NuggetRecall(weighted=True)],
         {"nugget_recall": NuggetRecall, "nugget_recall_weighted": NuggetRecall(weighted=True)})
register(_F1, [F1, F1(weighted=True)], {"argue_f1": F1, "argue_f1_weighted": F1(weighted=True)})
register(_SentenceSupport, [SentenceSupport])
register(_CitationSupport, [CitationSupport])
register(_CitationRelevance, [CitationRelevance])
for _family, _measure in ((_Sentences, Sentences), (_Judged, Judged), (_Truncated, Truncated), (_Failed, Failed),
                          (_Undetermined, Undetermined)):
    register(_family, [_measure], {_family.NAME.lower(): _measure} if _family is not _Sentences else {})
register(OutcomeCount, [OutcomeCount(outcome=int(o)) for o in Outcome],
         {f"outcome_{int(o)}": OutcomeCount(outcome=int(o)) for o in Outcome})
register(_Nuggets, [Nuggets])
register(_NuggetsEarned, [NuggetsEarned], {"nuggets_earned": NuggetsEarned})
register(_PrecisionUndefined, [PrecisionUndefined], {"precision_undefined": PrecisionUndefined})
