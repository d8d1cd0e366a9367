"""ARGUE and Auto-ARGUE-compatible metrics, computed from judgments records alone (never calling a model).

Sources:
  * ARGUE: J. Mayfield et al., "On the Evaluation of Machine-Generated Reports", SIGIR 2024
    (sentence precision over the flowchart outcomes; nugget recall).
  * Auto-ARGUE: W. G. Walden et al., "Auto-ARGUE: LLM-Based Report Generation Evaluation", 2025,
    arXiv:2509.26184 (sentence_support, citation_support, citation_relevance, nugget_coverage, f1).

Measures
--------
Every measure is a small immutable object in the ir_measures style with ONE canonical name, used as the
metric column of the scores TSV and as the key of every value dict: ``SentencePrecision``, ``NuggetRecall``,
``NuggetRecall(weighted=True)``, ``F1``, ``F1(weighted=True)``, ``SentenceSupport``, ``CitationSupport``,
``CitationRelevance`` and the counts ``Sentences``, ``Judged``, ``Truncated``, ``Failed``, ``Undetermined``,
``OutcomeCount(outcome=1)`` .. ``OutcomeCount(outcome=8)``, ``Nuggets``, ``NuggetsEarned``,
``PrecisionUndefined``. ``repr(m)`` is the canonical name and ``parse_measure(repr(m)) == m``. Parameters are
written ``Name(key=value,...)``: keys sorted, no spaces, parameters at their default left out; values are
``True``/``False`` or integers. The Auto-ARGUE names (``sentence_support``, ``nugget_coverage``,
``nugget_coverage_weighted``, ``f1``, ``outcome_3`` ...) are aliases: ``parse_measure`` accepts them (also
with extra parameters, e.g. ``nugget_coverage(micro=True)``) and returns the canonical measure.

Micro / macro naming scheme
---------------------------
Per-request rows carry the plain measure. On a run's ``all`` rows:
  * a ratio measure under its plain name is the MACRO value: the mean of the per-report values, NaN values
    skipped, NaN if every report is NaN;
  * the same measure with ``micro=True`` (``SentencePrecision(micro=True)``,
    ``NuggetRecall(micro=True,weighted=True)``, ``F1(micro=True)`` ...) is the MICRO value: the sum of the
    per-report numerators over the sum of the denominators (micro F1 = harmonic mean of micro precision and
    micro recall);
  * a count measure is the sum over the run's reports (``PrecisionUndefined`` on ``all`` = number of reports
    whose precision was undefined).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from judge.errors import InputError
from judge.judgments import EarnedAnswer, NuggetSummary, ReportJudgment, SentenceJudgment
from judge.labels import IMPORTANCE_WEIGHT, PRECISION_DENOMINATOR, PRECISION_NUMERATOR, Outcome
from judge.scores import ALL, ScoreRow

__all__ = [
    "AGGREGATE_MEASURES",
    "ALIASES",
    "F1",
    "MEASURES",
    "CitationRelevance",
    "CitationSupport",
    "Failed",
    "Judged",
    "Measure",
    "NuggetRecall",
    "Nuggets",
    "NuggetsEarned",
    "OutcomeCount",
    "PrecisionUndefined",
    "ReportScores",
    "RunScores",
    "Scores",
    "SentencePrecision",
    "SentenceSupport",
    "Sentences",
    "Truncated",
    "Undetermined",
    "f1_score",
    "known_measure_names",
    "parse_measure",
    "score_judgments",
    "score_report",
]

ParamValue = bool | int


# ---------------------------------------------------------------------------------------------------------
# Measures
# ---------------------------------------------------------------------------------------------------------

class Measure:
    """A named metric. Equality and hashing go by the canonical name; calling returns a re-parametrized copy."""

    NAME: ClassVar[str] = ""
    PARAMS: ClassVar[dict[str, ParamValue]] = {}   # parameter -> default (its type is the value's type)
    RATIO: ClassVar[bool] = True                     # ratio measures aggregate micro+macro, counts sum
    SOURCE: ClassVar[str] = ""

    def __init__(self, **params: ParamValue):
        for key, value in params.items():
            if key not in self.PARAMS:
                allowed = ", ".join(sorted(self.PARAMS)) or "none"
                raise ValueError(f"measure {self.NAME} has no parameter {key!r} (parameters: {allowed})")
            default = self.PARAMS[key]
            if type(value) is not type(default):  # bool is an int subclass: compare exact types
                raise ValueError(f"measure {self.NAME}: parameter {key}={value!r} must be "
                                 f"{type(default).__name__}")
        self._params: dict[str, ParamValue] = {**self.PARAMS, **params}
        self._validate()
        shown = [f"{k}={self._params[k]!r}" for k in sorted(self._params) if self._params[k] != self.PARAMS[k]]
        self._name = f"{self.NAME}({','.join(shown)})" if shown else self.NAME

    def _validate(self) -> None:
        pass

    def __call__(self, **params: ParamValue) -> Measure:
        return type(self)(**{**self._params, **params})

    @property
    def name(self) -> str:
        return self._name

    @property
    def params(self) -> Mapping[str, ParamValue]:
        return dict(self._params)

    @property
    def micro(self) -> bool:
        return bool(self._params.get("micro", False))

    @property
    def weighted(self) -> bool:
        return bool(self._params.get("weighted", False))

    @property
    def aliases(self) -> tuple[str, ...]:
        """Alias names that parse to exactly this measure (the Auto-ARGUE names)."""
        return tuple(sorted(a for a, m in ALIASES.items() if m == self))

    def __repr__(self) -> str:
        return self._name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and other._name == self._name

    def __hash__(self) -> int:
        return hash(self._name)


class _SentencePrecision(Measure):
    """ARGUE sentence precision: (#3 + #8) / (#1 + #3 + #5 + #7 + #8) over judged sentences with an outcome.

    Source: Mayfield et al., "On the Evaluation of Machine-Generated Reports", SIGIR 2024. A report whose
    denominator is empty scores 0.0 and is flagged (PrecisionUndefined = 1, plus a warning).
    """

    NAME = "SentencePrecision"
    PARAMS: ClassVar[dict[str, ParamValue]] = {"micro": False}
    SOURCE = "ARGUE (Mayfield et al., SIGIR 2024)"


class _NuggetRecall(Measure):
    """ARGUE nugget recall: earned nuggets / nuggets of the request; weighted: vital 2, okay 1.

    Source: Mayfield et al., SIGIR 2024; Auto-ARGUE (Walden et al. 2025) calls it nugget_coverage
    (nugget_coverage_weighted with weights). NaN without a nugget bank or with an empty one.
    """

    NAME = "NuggetRecall"
    PARAMS: ClassVar[dict[str, ParamValue]] = {"micro": False, "weighted": False}
    SOURCE = "ARGUE (Mayfield et al., SIGIR 2024); Auto-ARGUE nugget_coverage (Walden et al. 2025)"


class _F1(Measure):
    """Harmonic mean of sentence precision and (weighted) nugget recall; 0 when both are 0; NaN if recall is.

    Source: Auto-ARGUE (Walden et al. 2025) `f1`, combining the ARGUE measures of Mayfield et al., SIGIR 2024.
    Macro F1 is the mean of per-report F1; micro F1 the harmonic mean of micro precision and micro recall.
    """

    NAME = "F1"
    PARAMS: ClassVar[dict[str, ParamValue]] = {"micro": False, "weighted": False}
    SOURCE = "Auto-ARGUE f1 (Walden et al. 2025) over ARGUE precision/recall (Mayfield et al., SIGIR 2024)"


class _SentenceSupport(Measure):
    """Fraction of cited judged sentences that are supported by their citations (under the citation policy).

    Computed from the outcome: a sentence with citations and outcome 2 or 3 is supported, outcome 1
    unsupported; cited sentences with an uncited outcome (4-8) are excluded (and warned about).
    NaN when the report has no such sentence. Source: Auto-ARGUE `sentence_support` (Walden et al. 2025).
    """

    NAME = "SentenceSupport"
    PARAMS: ClassVar[dict[str, ParamValue]] = {"micro": False}
    SOURCE = "Auto-ARGUE sentence_support (Walden et al. 2025)"


class _CitationSupport(Measure):
    """Fraction of (sentence, cited document) pairs judged supporting, among pairs with a decision.

    Pairs are the distinct cited documents of each judged sentence with an outcome. A pair is decided when a
    `supports_citation` DecisionRecord with a non-None verdict covers the document: the record's `doc_ids`
    (a 'joint' decision over several documents gives each of them its verdict), or every cited document when
    `doc_ids` is empty. A pair is supported when any decision covering it says True. NaN when no pair is
    decided. Source: Auto-ARGUE `citation_support` (Walden et al. 2025).
    """

    NAME = "CitationSupport"
    PARAMS: ClassVar[dict[str, ParamValue]] = {"micro": False}
    SOURCE = "Auto-ARGUE citation_support (Walden et al. 2025)"


class _CitationRelevance(Measure):
    """Fraction of cited (sentence, document) pairs judged relevant -- a judgments-only approximation.

    Auto-ARGUE counts a pair relevant when the document attests at least one nugget answer of the request.
    The judgments file does not carry the doc -> nugget attestation (NuggetSummary has no doc lists), so here:
    the pairs are the distinct cited documents of every judged sentence (with an outcome) that has at least
    one DecisionRecord -- sentences without any DecisionRecord (e.g. outcome-only human labels) give no
    evidence and are left out; a pair is relevant iff its sentence has an `answers_nugget` DecisionRecord
    (whatever its verdict), because the walker asks that question only when the sentence's cited documents
    attest some candidate nugget. Consequences: relevance is decided per sentence, not per document (all
    cited documents of such a sentence count as relevant), and a sentence that never reached the nugget
    question (e.g. unsupported, outcome 1) counts as not relevant. NaN when there is no pair.
    Source: Auto-ARGUE `citation_relevance` (Walden et al. 2025), approximated as described.
    """

    NAME = "CitationRelevance"
    PARAMS: ClassVar[dict[str, ParamValue]] = {"micro": False}
    SOURCE = "Auto-ARGUE citation_relevance (Walden et al. 2025), judgments-only approximation"


class _Count(Measure):
    RATIO = False
    SOURCE = "argue-judge bookkeeping (ARGUE outcome histogram, Mayfield et al., SIGIR 2024)"


class _Sentences(_Count):
    """Number of sentences in the report (judged + truncated + failed + undetermined)."""

    NAME = "Sentences"


class _Judged(_Count):
    """Sentences with status 'judged' and an outcome: the ones scored."""

    NAME = "Judged"


class _Truncated(_Count):
    """Sentences beyond the report length limit (status 'truncated'): not scored."""

    NAME = "Truncated"


class _Failed(_Count):
    """Sentences whose judging failed (status 'failed'): not scored."""

    NAME = "Failed"


class _Undetermined(_Count):
    """Sentences with status 'undetermined', or status 'judged' without an outcome: not scored."""

    NAME = "Undetermined"


class OutcomeCount(_Count):
    """Number of scored sentences with ARGUE outcome `outcome` (1..8; Mayfield et al., SIGIR 2024, Fig. 2)."""

    NAME = "OutcomeCount"
    PARAMS: ClassVar[dict[str, ParamValue]] = {"outcome": 0}

    def __init__(self, *, outcome: int = 0, **params: ParamValue):
        super().__init__(outcome=outcome, **params)

    def _validate(self) -> None:
        if self._params["outcome"] not in range(1, 9):
            raise ValueError(f"measure OutcomeCount needs outcome=1..8, not outcome={self._params['outcome']!r}")

    @property
    def outcome(self) -> Outcome:
        return Outcome(self._params["outcome"])


class _Nuggets(_Count):
    """Nuggets of the request (0 without a nugget bank)."""

    NAME = "Nuggets"


class _NuggetsEarned(_Count):
    """Nuggets the report earned (each counted once)."""

    NAME = "NuggetsEarned"


class _PrecisionUndefined(_Count):
    """1 if the report's sentence precision had an empty denominator (and was set to 0.0), else 0."""

    NAME = "PrecisionUndefined"


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

# Every per-report measure, in output order.
MEASURES: tuple[Measure, ...] = (
    SentencePrecision, NuggetRecall, NuggetRecall(weighted=True), F1, F1(weighted=True),
    SentenceSupport, CitationSupport, CitationRelevance,
    Sentences, Judged, Truncated, Failed, Undetermined,
    *(OutcomeCount(outcome=int(o)) for o in Outcome),
    Nuggets, NuggetsEarned, PrecisionUndefined,
)

# Measures on a run's `all` rows: each ratio measure as macro (plain) then micro (micro=True); counts summed.
AGGREGATE_MEASURES: tuple[Measure, ...] = tuple(
    variant for m in MEASURES for variant in ((m, m(micro=True)) if m.RATIO else (m,)))

ALIASES: dict[str, Measure] = {
    "sentence_precision": SentencePrecision,
    "sentence_support": SentenceSupport,
    "citation_support": CitationSupport,
    "citation_relevance": CitationRelevance,
    "nugget_coverage": NuggetRecall,
    "nugget_coverage_weighted": NuggetRecall(weighted=True),
    "f1": F1,
    "f1_weighted": F1(weighted=True),
    "sentences": Sentences,
    "judged": Judged,
    "truncated": Truncated,
    "failed": Failed,
    "undetermined": Undetermined,
    **{f"outcome_{int(o)}": OutcomeCount(outcome=int(o)) for o in Outcome},
    "nuggets": Nuggets,
    "nuggets_earned": NuggetsEarned,
    "precision_undefined": PrecisionUndefined,
}

_FAMILIES: dict[str, type[Measure]] = {
    cls.NAME: cls for cls in (
        _SentencePrecision, _NuggetRecall, _F1, _SentenceSupport, _CitationSupport, _CitationRelevance,
        _Sentences, _Judged, _Truncated, _Failed, _Undetermined, OutcomeCount, _Nuggets, _NuggetsEarned,
        _PrecisionUndefined,
    )
}

_NAME_RE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*", re.DOTALL)
_PARAM_RE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(True|False|true|false|[+-]?\d+)\s*")


def known_measure_names() -> list[str]:
    """Canonical names of the registered measures, then the aliases."""
    return [m.name for m in MEASURES] + sorted(ALIASES)


def _unknown(name: str, why: str) -> ValueError:
    return ValueError(f"{why} in measure {name!r}; known measures: {', '.join(m.name for m in MEASURES)}; "
                      f"aliases: {', '.join(sorted(ALIASES))}; micro aggregates add micro=True to a ratio "
                      "measure, e.g. SentencePrecision(micro=True)")


def parse_measure(name: str) -> Measure:
    """Parse `Name` or `Name(key=value,...)` (values True/False or integers) without eval.

    Accepts canonical family names and aliases; raises ValueError listing the known measures otherwise.
    """
    if isinstance(name, Measure):
        return name
    match = _NAME_RE.fullmatch(name)
    if not match:
        raise _unknown(name, "bad syntax")
    base, arg_text = match.group(1), match.group(2)
    params: dict[str, ParamValue] = {}
    if arg_text is not None and arg_text.strip():
        for part in arg_text.split(","):
            pm = _PARAM_RE.fullmatch(part)
            if not pm:
                raise _unknown(name, f"bad parameter {part.strip()!r} (expected key=True|False|<integer>)")
            key, raw = pm.group(1), pm.group(2)
            if key in params:
                raise _unknown(name, f"parameter {key!r} given twice")
            params[key] = raw.lower() == "true" if raw.lower() in ("true", "false") else int(raw)
    if base in ALIASES:
        alias = ALIASES[base]
        clash = {k for k, v in params.items() if k in alias.params and alias.params[k] != v
                 and k in {"weighted", "outcome"}}
        if clash:
            raise _unknown(name, f"alias {base} fixes {', '.join(sorted(clash))}")
        try:
            return alias(**params) if params else alias
        except ValueError as exc:
            raise _unknown(name, str(exc)) from None
    family = _FAMILIES.get(base)
    if family is None:
        raise _unknown(name, f"unknown name {base!r}")
    if family is OutcomeCount and "outcome" not in params:
        raise _unknown(name, "OutcomeCount needs outcome=1..8")
    try:
        return family(**params)
    except ValueError as exc:
        raise _unknown(name, str(exc)) from None


# ---------------------------------------------------------------------------------------------------------
# Per-report scoring
# ---------------------------------------------------------------------------------------------------------

def f1_score(precision: float, recall: float) -> float:
    """Harmonic mean; 0.0 when both are 0; NaN when either is NaN."""
    if math.isnan(precision) or math.isnan(recall):
        return math.nan
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else math.nan


@dataclass(frozen=True)
class _Parts:
    """Numerators and denominators of one report, pooled for micro averages."""

    precision: tuple[int, int]
    recall: tuple[int, int] | None           # None: no nugget bank (excluded from micro recall)
    weighted_recall: tuple[int, int] | None
    sentence_support: tuple[int, int]
    citation_support: tuple[int, int]
    citation_relevance: tuple[int, int]


@dataclass(frozen=True)
class ReportScores:
    """The scores of one report: `values` maps canonical measure names to values (every measure in MEASURES)."""

    run_id: str
    request_id: str
    values: dict[str, float]
    precision_undefined: bool
    recall_undefined: bool
    earned: frozenset[str]                   # ids of the nuggets earned
    unknown_nugget_ids: int                  # EarnedAnswers naming a nugget not in the bank (ignored)
    unknown_answers: int                     # EarnedAnswers naming an answer not in the nugget's list (ignored)
    warnings: tuple[str, ...]
    parts: _Parts = field(repr=False)

    def __getitem__(self, measure: Measure | str) -> float:
        return self.values[parse_measure(measure).name]

    def rows(self) -> list[ScoreRow]:
        return [ScoreRow(self.run_id, self.request_id, m.name, self.values[m.name]) for m in MEASURES]


def _where(judgment: ReportJudgment) -> str:
    return f"run {judgment.run_id} request {judgment.request_id}"


def _earn(nuggets: list[NuggetSummary], earned_answers: Iterable[EarnedAnswer], where: str,
          warnings: list[str]) -> tuple[set[str], int, int]:
    """Which nuggets are earned; EarnedAnswers naming unknown nuggets / answers are ignored and counted."""
    by_id: dict[str, NuggetSummary] = {}
    for nugget in nuggets:
        if nugget.nugget_id in by_id:
            warnings.append(f"{where}: nugget id {nugget.nugget_id!r} appears twice in the bank; "
                            "the first is used")
            continue
        by_id[nugget.nugget_id] = nugget
        if not nugget.absence and not nugget.answers:
            warnings.append(f"{where}: nugget {nugget.nugget_id!r} has no answers and can never be earned")
    got: dict[str, set[str | None]] = defaultdict(set)
    unknown_ids: list[str] = []
    unknown_answers: list[str] = []
    for ea in earned_answers:
        nugget = by_id.get(ea.nugget_id)
        if nugget is None:
            unknown_ids.append(ea.nugget_id)
        elif nugget.absence or ea.answer in nugget.answers:
            got[ea.nugget_id].add(ea.answer)
        else:
            unknown_answers.append(f"{ea.nugget_id}:{ea.answer!r}")
    if unknown_ids:
        warnings.append(f"{where}: {len(unknown_ids)} earned answer(s) name nugget ids not in the bank, "
                        f"ignored: {', '.join(sorted(set(unknown_ids)))}")
    if unknown_answers:
        warnings.append(f"{where}: {len(unknown_answers)} earned answer(s) name answers not in the nugget's "
                        f"answer list, ignored: {', '.join(sorted(set(unknown_answers)))}")
    earned: set[str] = set()
    for nid, answers in got.items():
        nugget = by_id[nid]
        if nugget.absence:
            earned.add(nid)
        elif nugget.aggregator == "AND":
            if set(nugget.answers) <= answers:
                earned.add(nid)
        elif answers:
            earned.add(nid)
    return earned, len(unknown_ids), len(unknown_answers)


def _cited_docs(sentence: SentenceJudgment) -> list[str]:
    return sorted(set(sentence.citations))


def score_report(judgment: ReportJudgment) -> ReportScores:
    """Every measure of MEASURES for one report, with its flags and warnings."""
    where = _where(judgment)
    warnings: list[str] = []
    status_counts = {"judged": 0, "truncated": 0, "failed": 0, "undetermined": 0}
    histogram = {o: 0 for o in Outcome}
    scored: list[SentenceJudgment] = []
    judged_without_outcome = 0
    for sentence in judgment.sentences:
        if sentence.status == "judged" and sentence.outcome is None:
            judged_without_outcome += 1
            status_counts["undetermined"] += 1
        else:
            status_counts[sentence.status] += 1
        if sentence.status == "judged" and sentence.outcome is not None:
            scored.append(sentence)
            histogram[sentence.outcome] += 1
    if judged_without_outcome:
        warnings.append(f"{where}: {judged_without_outcome} sentence(s) have status 'judged' but no outcome; "
                        "counted as undetermined and not scored")

    # Sentence precision (ARGUE).
    p_num = sum(histogram[o] for o in PRECISION_NUMERATOR)
    p_den = sum(histogram[o] for o in PRECISION_DENOMINATOR)
    precision_undefined = p_den == 0
    precision = p_num / p_den if p_den else 0.0
    if precision_undefined:
        warnings.append(f"{where}: no judged sentence has outcome 1, 3, 5, 7 or 8; "
                        "sentence precision undefined, scored 0.0")

    # Nugget recall.
    earned_answers = [ea for s in scored for ea in s.earned]
    odd = sorted({s.index for s in scored if s.earned and s.outcome not in PRECISION_NUMERATOR})
    if odd:
        warnings.append(f"{where}: sentence(s) {', '.join(map(str, odd))} earn nuggets although their outcome "
                        "is neither 3 nor 8; counted")
    earned: set[str] = set()
    unknown_ids = unknown_answers = 0
    if judgment.nuggets is None:
        recall = weighted_recall = math.nan
        recall_parts = weighted_parts = None
        n_nuggets = 0
        warnings.append(f"{where}: no nugget bank; recall undefined")
    else:
        earned, unknown_ids, unknown_answers = _earn(judgment.nuggets, earned_answers, where, warnings)
        distinct = {n.nugget_id: n for n in reversed(judgment.nuggets)}  # first occurrence wins
        n_nuggets = len(distinct)
        total_weight = sum(IMPORTANCE_WEIGHT[n.importance] for n in distinct.values())
        earned_weight = sum(IMPORTANCE_WEIGHT[distinct[nid].importance] for nid in earned)
        recall_parts = (len(earned), n_nuggets)
        weighted_parts = (earned_weight, total_weight)
        recall = _ratio(*recall_parts)
        weighted_recall = _ratio(*weighted_parts)
        if n_nuggets == 0:
            warnings.append(f"{where}: the nugget bank is empty; recall undefined")
    recall_undefined = math.isnan(recall)

    # Auto-ARGUE-compatible measures.
    supported = cited = 0
    inconsistent: list[int] = []
    cs_yes = cs_decided = 0
    cr_yes = cr_pairs = 0
    for s in scored:
        has_citations = bool(s.citations)
        if has_citations and s.outcome in (Outcome.SUPPORTED_NO_NUGGET, Outcome.SUPPORTED_NUGGET):
            supported += 1
            cited += 1
        elif has_citations and s.outcome == Outcome.UNSUPPORTED_CITATION:
            cited += 1
        elif has_citations or s.outcome in (Outcome.UNSUPPORTED_CITATION, Outcome.SUPPORTED_NO_NUGGET,
                                            Outcome.SUPPORTED_NUGGET):
            inconsistent.append(s.index)
        if not has_citations:
            continue
        docs = _cited_docs(s)
        verdicts: dict[str, set[bool]] = defaultdict(set)
        for d in s.decisions:
            if d.decision == "supports_citation" and d.verdict is not None:
                for doc in (set(d.doc_ids) & set(docs)) if d.doc_ids else docs:
                    verdicts[doc].add(d.verdict)
        cs_decided += len(verdicts)
        cs_yes += sum(1 for v in verdicts.values() if True in v)
        if s.decisions:
            cr_pairs += len(docs)
            if any(d.decision == "answers_nugget" for d in s.decisions):
                cr_yes += len(docs)
    if inconsistent:
        warnings.append(f"{where}: sentence(s) {', '.join(map(str, inconsistent))} have an outcome that does "
                        "not match whether they cite (outcomes 1-3 need citations, 4-8 none); "
                        "left out of sentence support")

    values: dict[str, float] = {
        SentencePrecision.name: precision,
        NuggetRecall.name: recall,
        NuggetRecall(weighted=True).name: weighted_recall,
        F1.name: f1_score(precision, recall),
        F1(weighted=True).name: f1_score(precision, weighted_recall),
        SentenceSupport.name: _ratio(supported, cited),
        CitationSupport.name: _ratio(cs_yes, cs_decided),
        CitationRelevance.name: _ratio(cr_yes, cr_pairs),
        Sentences.name: float(len(judgment.sentences)),
        Judged.name: float(status_counts["judged"]),
        Truncated.name: float(status_counts["truncated"]),
        Failed.name: float(status_counts["failed"]),
        Undetermined.name: float(status_counts["undetermined"]),
        **{OutcomeCount(outcome=int(o)).name: float(histogram[o]) for o in Outcome},
        Nuggets.name: float(n_nuggets),
        NuggetsEarned.name: float(len(earned)),
        PrecisionUndefined.name: 1.0 if precision_undefined else 0.0,
    }
    assert list(values) == [m.name for m in MEASURES]
    return ReportScores(
        run_id=judgment.run_id, request_id=judgment.request_id, values=values,
        precision_undefined=precision_undefined, recall_undefined=recall_undefined,
        earned=frozenset(earned), unknown_nugget_ids=unknown_ids, unknown_answers=unknown_answers,
        warnings=tuple(warnings),
        parts=_Parts(
            precision=(p_num, p_den), recall=recall_parts, weighted_recall=weighted_parts,
            sentence_support=(supported, cited), citation_support=(cs_yes, cs_decided),
            citation_relevance=(cr_yes, cr_pairs),
        ),
    )


# ---------------------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------------------

def _macro(values: Iterable[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return math.fsum(kept) / len(kept) if kept else math.nan


def _pool(parts: Iterable[tuple[int, int] | None]) -> float:
    present = [p for p in parts if p is not None]
    return _ratio(sum(p[0] for p in present), sum(p[1] for p in present))


@dataclass(frozen=True)
class RunScores:
    """One run: per-report scores (by request id, sorted) beside the aggregates (keys: AGGREGATE_MEASURES)."""

    run_id: str
    reports: dict[str, ReportScores]
    aggregates: dict[str, float]
    warnings: tuple[str, ...]

    def __getitem__(self, measure: Measure | str) -> float:
        """An aggregate: plain ratio measure = macro, `micro=True` = micro, count = sum."""
        return self.aggregates[parse_measure(measure).name]

    def rows(self) -> list[ScoreRow]:
        """Per-request rows (request ids sorted, measures in MEASURES order), then the `all` rows."""
        rows = [row for request_id in sorted(self.reports) for row in self.reports[request_id].rows()]
        rows += [ScoreRow(self.run_id, ALL, m.name, self.aggregates[m.name]) for m in AGGREGATE_MEASURES]
        return rows


def _score_run(run_id: str, reports: list[ReportScores]) -> RunScores:
    by_request = {r.request_id: r for r in sorted(reports, key=lambda r: r.request_id)}
    rs = list(by_request.values())
    warnings = [w for r in rs for w in r.warnings]
    aggregates: dict[str, float] = {}
    for m in MEASURES:
        column = [r.values[m.name] for r in rs]
        aggregates[m.name] = _macro(column) if m.RATIO else math.fsum(column)
    micro_p_parts = [r.parts.precision for r in rs]
    micro_p = _pool(micro_p_parts)
    if math.isnan(micro_p):
        micro_p = 0.0
        warnings.append(f"run {run_id}: no report has a sentence with outcome 1, 3, 5, 7 or 8; "
                        "micro sentence precision undefined, scored 0.0")
    micro_r = _pool(r.parts.recall for r in rs)
    micro_wr = _pool(r.parts.weighted_recall for r in rs)
    micro = {
        SentencePrecision: micro_p,
        NuggetRecall: micro_r,
        NuggetRecall(weighted=True): micro_wr,
        F1: f1_score(micro_p, micro_r),
        F1(weighted=True): f1_score(micro_p, micro_wr),
        SentenceSupport: _pool(r.parts.sentence_support for r in rs),
        CitationSupport: _pool(r.parts.citation_support for r in rs),
        CitationRelevance: _pool(r.parts.citation_relevance for r in rs),
    }
    for m, value in micro.items():
        aggregates[m(micro=True).name] = value
    undefined = sum(r.recall_undefined for r in rs)
    if undefined:
        warnings.append(f"run {run_id}: recall undefined for {undefined} of {len(rs)} report(s); "
                        "left out of recall and F1 means")
    ordered = {m.name: aggregates[m.name] for m in AGGREGATE_MEASURES}
    return RunScores(run_id=run_id, reports=by_request, aggregates=ordered, warnings=tuple(warnings))


@dataclass(frozen=True)
class Scores:
    """Scores of every run (sorted by run id) and all their warnings, in row order."""

    runs: dict[str, RunScores]

    @property
    def warnings(self) -> list[str]:
        return [w for run in self.runs.values() for w in run.warnings]

    def rows(self) -> list[ScoreRow]:
        """Rows for the scores TSV: per run (sorted), per-request rows then `all` rows; see RunScores.rows."""
        return [row for run in self.runs.values() for row in run.rows()]

    def __iter__(self) -> Iterator[RunScores]:
        return iter(self.runs.values())


def score_judgments(judgments: Iterable[ReportJudgment]) -> Scores:
    """Score judgments records, grouped by run_id. Raises InputError on a duplicate (run, request) or a
    request id equal to the reserved aggregate id `all`."""
    by_run: dict[str, list[ReportScores]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    for judgment in judgments:
        if judgment.key in seen:
            raise InputError(f"two judgments for run {judgment.run_id} request {judgment.request_id}")
        if judgment.request_id == ALL:
            raise InputError(f"run {judgment.run_id}: request id {ALL!r} is reserved for aggregate rows")
        seen.add(judgment.key)
        by_run[judgment.run_id].append(score_report(judgment))
    return Scores(runs={run_id: _score_run(run_id, by_run[run_id]) for run_id in sorted(by_run)})
