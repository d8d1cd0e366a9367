"""Auto-ARGUE's measures under Auto-ARGUE's own names and definitions (W. G. Walden et al., "Auto-ARGUE:
LLM-Based Report Generation Evaluation", 2025, arXiv:2509.26184; the public Auto-ARGUE evaluator), in the
`autoargue.` namespace: `autoargue.f1`, `autoargue.sentence_support` ... (the scores TSV's metric column).

They differ from ARGUE's (argue.py) on purpose, so both are kept, and the namespace keeps them apart where the
bare names differ only in letter case (`F1` is ARGUE's, `autoargue.f1` Auto-ARGUE's; `SentenceSupport` is
argue-judge's, `autoargue.sentence_support` Auto-ARGUE's). Below, names are Auto-ARGUE's own, without the
namespace:
  * `sentence_support` = correctly_cited_sentences / sentences_with_citations_or_requiring_citations: a sentence
    is correctly cited when EVERY citation supports it; the denominator adds uncited sentences that need a
    citation and are the first instance of their claim (outcome #5).
  * `citation_support` = supporting_citations / citations, over every (sentence, distinct cited document) pair.
  * `citation_relevance` = relevant_citations / citations: a citation is relevant when the document is a
    reference of some answer in the request's nugget bank (no model call).
  * `nugget_coverage` = correct_nuggets / nuggets: answers without references are dropped, then questions left
    without answers; an answer counts when any sentence states it, even one whose citation does not support it;
    an OR nugget needs one answer, an AND nugget all its (referenced) answers. `_weighted`: vital 2, okay 1.
  * `f1` = harmonic mean of sentence_support and nugget_coverage (`f1_weighted`: of the weighted coverage).
Counts and ratios consider the sentences within the length limit with an outcome; `sentences` and
`character_count` count every sentence within the limit. `citation_relevance`, the nugget counts and
`nugget_coverage` need the nugget bank's answer references (`--nuggets`): without it they are NaN.
Checked against Auto-ARGUE's own scores of the NeuCLIR 2024 example run (tests/test_autoargue.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from judge.metrics.facts import ReportFacts
from judge.metrics.measure import Count, Harmonic, Ratio, Stats, register

AUTO_ARGUE = "Auto-ARGUE (Walden et al. 2025, arXiv:2509.26184)"
NAMESPACE = "autoargue."


def _counts(facts: ReportFacts) -> dict[str, Callable[[], float | None]]:
    """Every Auto-ARGUE count of one report, lazily (None: needs the nugget bank)."""
    pairs = facts.pair_support
    nuggets, correct, relevant_docs = facts.auto_argue_nuggets, facts.correct_nuggets, facts.referenced_docs
    return {
        "sentences": lambda: len(facts.within_limit),
        "character_count": lambda: sum(len(s.text) for s in facts.within_limit),
        "citations": lambda: sum(len(p) for p in pairs),
        "supporting_citations": lambda: sum(sum(p.values()) for p in pairs),
        "relevant_citations": lambda: None if relevant_docs is None else sum(
            doc in relevant_docs for p in pairs for doc in p),
        "correctly_cited_sentences": lambda: sum(all(p.values()) for p in pairs),
        "sentences_with_citations_or_requiring_citations": lambda: len(pairs) + facts.requiring_citation,
        "nuggets": lambda: None if nuggets is None else len(nuggets),
        "nuggets_weighted": lambda: None if nuggets is None else sum(n.weight for n in nuggets.values()),
        "correct_nuggets": lambda: None if correct is None else len(correct),
        "correct_nuggets_weighted": lambda: None if correct is None else sum(n.weight for n in correct),
    }


def count_of(name: str, facts: ReportFacts) -> float | None:
    value = _counts(facts)[name]()
    return None if value is None else float(value)


class AutoArgueCount(Count):
    """A count Auto-ARGUE reports beside its scores (see the module docstring for each)."""

    SOURCE = AUTO_ARGUE
    COUNT: ClassVar[str] = ""   # Auto-ARGUE's own name of the count

    def stats(self, facts: ReportFacts) -> Stats | None:
        value = count_of(self.COUNT, facts)
        return None if value is None else (value,)


class AutoArgueRatio(Ratio):
    """An Auto-ARGUE score: NUMERATOR / DENOMINATOR, two of its counts. NaN when the denominator is empty."""

    SOURCE = AUTO_ARGUE
    NUMERATOR: ClassVar[str] = ""
    DENOMINATOR: ClassVar[str] = ""

    def stats(self, facts: ReportFacts) -> Stats | None:
        numerator, denominator = count_of(self.NUMERATOR, facts), count_of(self.DENOMINATOR, facts)
        return None if numerator is None or denominator is None else (numerator, denominator)


def _count_class(name: str, doc: str) -> type[AutoArgueCount]:
    return type(f"AutoArgue_{name}", (AutoArgueCount,), {"NAME": NAMESPACE + name, "COUNT": name,
                                                         "__doc__": f"{doc} Source: {AUTO_ARGUE}."})


def _ratio_class(name: str, numerator: str, denominator: str, doc: str) -> type[AutoArgueRatio]:
    return type(f"AutoArgue_{name}", (AutoArgueRatio,), {
        "NAME": NAMESPACE + name, "NUMERATOR": numerator, "DENOMINATOR": denominator,
        "__doc__": f"{doc} = {numerator} / {denominator}. Source: {AUTO_ARGUE}."})


class _F1Base(Harmonic):
    SOURCE = AUTO_ARGUE
    COVERAGE: ClassVar[str] = "nugget_coverage"

    def parts(self) -> tuple[Ratio, Ratio]:
        return BY_NAME["sentence_support"], BY_NAME[self.COVERAGE]  # type: ignore[return-value]


class AutoArgueF1(_F1Base):
    """Auto-ARGUE f1: harmonic mean of sentence_support and nugget_coverage (Walden et al. 2025)."""

    NAME = NAMESPACE + "f1"


class AutoArgueF1Weighted(_F1Base):
    """Auto-ARGUE f1_weighted: harmonic mean of sentence_support and nugget_coverage_weighted
    (Walden et al. 2025)."""

    NAME = NAMESPACE + "f1_weighted"
    COVERAGE = "nugget_coverage_weighted"


COUNTS = {
    "sentences": "Sentences within the length limit.",
    "character_count": "Characters of the sentences within the length limit.",
    "citations": "(sentence, distinct cited document) pairs.",
    "relevant_citations": "Citations of a document that is a reference of some answer in the nugget bank.",
    "supporting_citations": "Citations judged to support their sentence.",
    "correctly_cited_sentences": "Cited sentences that every one of their citations supports.",
    "sentences_with_citations_or_requiring_citations":
        "Cited sentences plus uncited ones that need a citation and state a new claim (outcome #5).",
    "nuggets": "Nugget questions left once answers without references are dropped.",
    "nuggets_weighted": "The same, vital counting 2 and okay 1.",
    "correct_nuggets": "Nuggets whose matched answers satisfy the aggregator (OR: one, AND: all).",
    "correct_nuggets_weighted": "The same, vital counting 2 and okay 1.",
}
RATIOS = {
    "sentence_support": ("correctly_cited_sentences", "sentences_with_citations_or_requiring_citations",
                         "Auto-ARGUE sentence support"),
    "citation_support": ("supporting_citations", "citations", "Auto-ARGUE citation support"),
    "citation_relevance": ("relevant_citations", "citations", "Auto-ARGUE citation relevance"),
    "nugget_coverage": ("correct_nuggets", "nuggets", "Auto-ARGUE nugget coverage"),
    "nugget_coverage_weighted": ("correct_nuggets_weighted", "nuggets_weighted",
                                 "Auto-ARGUE weighted nugget coverage (vital 2, okay 1)"),
}

# Auto-ARGUE's own name (as in its score files) -> the measure, whose name is the namespaced one.
BY_NAME: dict[str, Count | Ratio | Harmonic] = {}
for _name, (_num, _den, _doc) in RATIOS.items():
    BY_NAME[_name] = _ratio_class(_name, _num, _den, _doc)()
BY_NAME["f1"] = AutoArgueF1()
BY_NAME["f1_weighted"] = AutoArgueF1Weighted()
for _name, _doc in COUNTS.items():
    BY_NAME[_name] = _count_class(_name, _doc)()

# Registered once; Auto-ARGUE's `_macro` / `_micro` suffixes for the `all` rows parse too, in the namespace.
for _measure in BY_NAME.values():
    _variants = {f"{_measure.name}_macro": _measure, f"{_measure.name}_micro": _measure(micro=True)} \
        if _measure.RATIO else {}
    register(type(_measure), [_measure], _variants)
