"""Hand-computed checks of judge.metrics: ARGUE precision/recall/F1, micro/macro, argue-judge's Auto-ARGUE-style
measures, names. Auto-ARGUE's own measures: tests/test_autoargue.py."""

from __future__ import annotations

import math

import pytest

from judge.errors import InputError
from judge.formats.judgments import DecisionRecord, EarnedAnswer, NuggetSummary, ReportJudgment, SentenceJudgment
from judge.formats.scores import ALL, format_value, read_scores, write_scores
from judge.metrics import (
    AGGREGATE_MEASURES,
    ALIASES,
    F1,
    MEASURES,
    CitationRelevance,
    CitationSupport,
    Failed,
    Judged,
    Measure,
    NuggetRecall,
    Nuggets,
    NuggetsEarned,
    OutcomeCount,
    PrecisionUndefined,
    SentencePrecision,
    Sentences,
    SentenceSupport,
    Truncated,
    Undetermined,
    f1_score,
    parse_measure,
    score_judgments,
    score_report,
)

TOL = 1e-9
NO_BANK = object()


# ----------------------------------------------------------------------------------------------- helpers

def ea(nugget_id: str, answer: str | None = None) -> EarnedAnswer:
    return EarnedAnswer(nugget_id=nugget_id, answer=answer)


def sent(outcome: int | None, *, index: int = 0, cites: tuple[str, ...] = (), status: str = "judged",
         earned: tuple[EarnedAnswer, ...] = (), decisions: tuple[DecisionRecord, ...] = ()) -> SentenceJudgment:
    return SentenceJudgment(index=index, text=f"sentence {index}", citations=list(cites), status=status,
                            outcome=outcome, earned=list(earned), decisions=list(decisions))


def nug(nugget_id: str, *answers: str, agg: str = "OR", imp: str = "okay", absence: bool = False
        ) -> NuggetSummary:
    return NuggetSummary(nugget_id=nugget_id, question=f"{nugget_id}?", aggregator=agg, importance=imp,
                         absence=absence, answers=list(answers))


def report(*sentences: SentenceJudgment, nuggets=NO_BANK, run: str = "r1", request: str = "q1"
           ) -> ReportJudgment:
    """Sentences get their index from their position; default bank: one okay OR nugget n1 with answer a."""
    numbered = [s.model_copy(update={"index": i}) for i, s in enumerate(sentences)]
    bank = [nug("n1", "a")] if nuggets is NO_BANK else nuggets
    return ReportJudgment(run_id=run, request_id=request, sentences=numbered, nuggets=bank)


def decision(kind: str, verdict: bool | None, *doc_ids: str) -> DecisionRecord:
    return DecisionRecord(decision=kind, verdict=verdict, doc_ids=list(doc_ids))


def close(actual: float, expected: float) -> bool:
    if math.isnan(expected):
        return math.isnan(actual)
    return math.isclose(actual, expected, rel_tol=0, abs_tol=TOL)


# ------------------------------------------------------------------------------------ sentence precision

@pytest.mark.parametrize("outcomes, precision, undefined", [
    ([1, 2, 3, 4, 5, 6, 7, 8], 2 / 5, False),   # (#3 + #8) / (#1 + #3 + #5 + #7 + #8)
    ([3, 3, 1], 2 / 3, False),
    ([8, 7], 1 / 2, False),
    ([5], 0.0, False),                          # a real zero: not flagged
    ([3, 2, 4, 6], 1.0, False),                 # neutral outcomes do not count
    ([2, 4, 6], 0.0, True),                     # only neutral outcomes: empty denominator
    ([], 0.0, True),                            # no sentence at all
])
def test_sentence_precision(outcomes, precision, undefined):
    scores = score_report(report(*(sent(o) for o in outcomes)))
    assert close(scores[SentencePrecision], precision)
    assert scores.precision_undefined is undefined
    assert scores[PrecisionUndefined] == (1.0 if undefined else 0.0)
    assert any("sentence precision undefined" in w for w in scores.warnings) is undefined


def test_every_outcome_counted():
    outcomes = [1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 7, 8, 8, 8, 8]
    scores = score_report(report(*(sent(o) for o in outcomes)))
    for o in range(1, 9):
        assert scores[OutcomeCount(outcome=o)] == outcomes.count(o), o
        assert scores[f"outcome_{o}"] == outcomes.count(o)
    assert scores[Judged] == scores[Sentences] == len(outcomes)
    # (3 + 4) / (1 + 3 + 2 + 1 + 4)
    assert close(scores[SentencePrecision], 7 / 11)


def test_truncated_failed_undetermined_are_excluded_and_counted():
    scores = score_report(report(
        sent(3),
        sent(1, status="truncated"),            # an outcome on an unjudged sentence is ignored
        sent(None, status="truncated"),
        sent(5, status="failed"),
        sent(None, status="undetermined"),
        sent(None),                             # "judged" but no outcome -> undetermined
    ))
    assert close(scores[SentencePrecision], 1.0)
    assert (scores[Sentences], scores[Judged], scores[Truncated], scores[Failed], scores[Undetermined]) == (
        6, 1, 2, 1, 2)
    assert scores[OutcomeCount(outcome=1)] == 0 and scores[OutcomeCount(outcome=5)] == 0
    assert any("status 'judged' but no outcome" in w for w in scores.warnings)


def test_earned_answers_of_unscored_sentences_do_not_count():
    scores = score_report(report(sent(3, status="failed", earned=(ea("n1", "a"),))))
    assert scores[NuggetRecall] == 0.0 and scores[PrecisionUndefined] == 1.0


# ----------------------------------------------------------------------------------------- nugget recall

@pytest.mark.parametrize("bank, earned_per_sentence, expected_earned, recall", [
    # OR: one of two answers earns the nugget.
    ([nug("n1", "a", "b")], [[ea("n1", "a")]], {"n1"}, 1.0),
    # AND: one of two answers does not.
    ([nug("n1", "a", "b", agg="AND")], [[ea("n1", "a")]], set(), 0.0),
    # AND: both answers, from two sentences, do.
    ([nug("n1", "a", "b", agg="AND")], [[ea("n1", "a")], [ea("n1", "b")]], {"n1"}, 1.0),
    # Duplicates count once: the same answer earned by two sentences, another answer of the same OR nugget.
    ([nug("n1", "a", "b"), nug("n2", "c")], [[ea("n1", "a")], [ea("n1", "a"), ea("n1", "b")]], {"n1"}, 0.5),
    # Absence nugget: earned by naming it, answer None ...
    ([nug("n1", "a"), nug("x", absence=True)], [[ea("x")]], {"x"}, 0.5),
    # ... or any answer.
    ([nug("x", absence=True)], [[ea("x", "whatever")]], {"x"}, 1.0),
    # An answer that is not in the nugget's list earns nothing (exact match).
    ([nug("n1", "a")], [[ea("n1", "A")], [ea("n1")]], set(), 0.0),
    # A non-absence nugget without answers can never be earned (no vacuous AND).
    ([nug("n1", agg="AND"), nug("n2", "c")], [[ea("n2", "c")]], {"n2"}, 0.5),
])
def test_nugget_recall(bank, earned_per_sentence, expected_earned, recall):
    scores = score_report(report(*(sent(3, earned=tuple(e)) for e in earned_per_sentence), nuggets=bank))
    assert scores.earned == expected_earned
    assert scores[NuggetsEarned] == len(expected_earned)
    assert scores[Nuggets] == len(bank)
    assert close(scores[NuggetRecall], recall)
    assert not scores.recall_undefined


def test_absence_nugget_earned_by_outcome_8_sentence():
    bank = [nug("n1", "a", imp="vital"), nug("gone", absence=True, imp="vital")]
    scores = score_report(report(sent(8, earned=(ea("gone"),)), sent(4), nuggets=bank))
    assert scores.earned == {"gone"}
    assert close(scores[SentencePrecision], 1.0)         # 1 / 1
    assert close(scores[NuggetRecall], 0.5)
    assert close(scores[F1], 2 * 1.0 * 0.5 / 1.5)
    assert not scores.warnings


def test_weighted_recall():
    # n1 vital (weight 2) earned; n2, n3, n4 okay (weight 1) not earned.
    bank = [nug("n1", "a", imp="vital"), nug("n2", "b"), nug("n3", "c"), nug("n4", "d")]
    scores = score_report(report(sent(3, earned=(ea("n1", "a"),)), nuggets=bank))
    # recall 1/4; weighted 2 / (2 + 1 + 1 + 1) = 0.4; precision 1.
    assert close(scores[NuggetRecall], 0.25)
    assert close(scores[NuggetRecall(weighted=True)], 0.4)
    # ARGUE's snake_case alias (Auto-ARGUE's autoargue.nugget_coverage_weighted is its own measure: test_autoargue.py)
    assert close(scores["nugget_recall_weighted"], 0.4)
    assert close(scores[F1], 2 * 0.25 / 1.25)
    assert close(scores[F1(weighted=True)], 2 * 0.4 / 1.4)


def test_unknown_nugget_ids_and_answers_ignored_but_counted():
    bank = [nug("n1", "a"), nug("n2", "b")]
    scores = score_report(report(
        sent(3, earned=(ea("n1", "a"), ea("n9", "a"))),
        sent(3, earned=(ea("n9", "z"), ea("n2", "typo"))),
        nuggets=bank))
    assert scores.earned == {"n1"}
    assert close(scores[NuggetRecall], 0.5)
    assert scores.unknown_nugget_ids == 2
    assert scores.unknown_answers == 1
    assert any("not in the bank" in w and "n9" in w for w in scores.warnings)
    assert any("not in the nugget's answer list" in w and "n2" in w for w in scores.warnings)


@pytest.mark.parametrize("bank, why", [(None, "no nugget bank"), ([], "nugget bank is empty")])
def test_recall_undefined_without_bank(bank, why):
    scores = score_report(report(sent(3, earned=(ea("n1", "a"),)), nuggets=bank))
    assert math.isnan(scores[NuggetRecall]) and math.isnan(scores[NuggetRecall(weighted=True)])
    assert math.isnan(scores[F1]) and math.isnan(scores[F1(weighted=True)])
    assert scores.recall_undefined
    assert scores[Nuggets] == 0 and scores[NuggetsEarned] == 0
    assert close(scores[SentencePrecision], 1.0)
    assert any(why in w and "recall undefined" in w and "run r1 request q1" in w for w in scores.warnings)


# ------------------------------------------------------------------------------------------------- F1

@pytest.mark.parametrize("p, r, f", [
    (0.0, 0.0, 0.0),
    (1.0, 0.0, 0.0),
    (0.0, 1.0, 0.0),
    (0.5, 0.5, 0.5),
    (0.25, 0.5, 1 / 3),
    (1.0, 1.0, 1.0),
    (1.0, math.nan, math.nan),
    (math.nan, 0.0, math.nan),
])
def test_f1_score(p, r, f):
    assert close(f1_score(p, r), f)


def test_f1_of_flagged_precision_is_zero_not_nan():
    # Only outcome 2 (neutral): precision undefined -> 0.0 flagged; the nugget is still earned (with warning).
    scores = score_report(report(sent(2, earned=(ea("n1", "a"),))))
    assert scores[SentencePrecision] == 0.0 and scores.precision_undefined
    assert scores[NuggetRecall] == 1.0
    assert scores[F1] == 0.0
    assert any("neither 3 nor 8" in w for w in scores.warnings)


# -------------------------------------------------------------------------------------- micro / macro

def two_report_run(extra: tuple[ReportJudgment, ...] = ()):
    bank_a = [nug("n1", "a", imp="vital"), nug("n2", "b")]
    a = report(sent(3, earned=(ea("n1", "a"),)), sent(1), sent(1), sent(1), sent(4), nuggets=bank_a, request="qA")
    bank_b = [nug(f"m{i}", "x") for i in range(1, 5)]
    b = report(sent(3, earned=(ea("m1", "x"), ea("m2", "x"))), sent(3, earned=(ea("m3", "x"),)),
               nuggets=bank_b, request="qB")
    return score_judgments([b, a, *extra])


def test_micro_and_macro_differ():
    # Report A: outcomes 3,1,1,1,4 -> P = 1/4;  nuggets n1 (vital, earned), n2 (okay) -> R = 1/2, wR = 2/3
    # Report B: outcomes 3,3       -> P = 2/2;  nuggets m1..m4 (okay), 3 earned  -> R = 3/4, wR = 3/4
    # macro P  = (1/4 + 1) / 2 = 0.625          micro P  = (1 + 2) / (4 + 2) = 0.5
    # macro R  = (1/2 + 3/4) / 2 = 0.625        micro R  = (1 + 3) / (2 + 4) = 2/3
    # macro wR = (2/3 + 3/4) / 2 = 17/24        micro wR = (2 + 3) / (3 + 4) = 5/7
    # F1 A = 2(1/4)(1/2)/(3/4) = 1/3; F1 B = 2(1)(3/4)/(7/4) = 6/7; macro F1 = (1/3 + 6/7) / 2 = 25/42
    # micro F1 = 2(1/2)(2/3)/(7/6) = 4/7
    run = two_report_run().runs["r1"]
    expected = {
        "SentencePrecision": 0.625, "SentencePrecision(micro=True)": 0.5,
        "NuggetRecall": 0.625, "NuggetRecall(micro=True)": 2 / 3,
        "NuggetRecall(weighted=True)": 17 / 24, "NuggetRecall(micro=True,weighted=True)": 5 / 7,
        "F1": 25 / 42, "F1(micro=True)": 4 / 7,
        # weighted F1 A = 2(1/4)(2/3)/(11/12) = 4/11; B = 6/7; macro = (4/11 + 6/7)/2 = 47/77
        # micro weighted F1 = 2(1/2)(5/7)/(1/2 + 5/7) = 10/17
        "F1(weighted=True)": 47 / 77, "F1(micro=True,weighted=True)": 10 / 17,
        "Sentences": 7, "OutcomeCount(outcome=1)": 3, "OutcomeCount(outcome=3)": 3, "Nuggets": 6,
        "NuggetsEarned": 4, "PrecisionUndefined": 0,
    }
    for name, value in expected.items():
        assert close(run[name], value), name
    assert close(run.reports["qA"][F1], 1 / 3) and close(run.reports["qB"][F1], 6 / 7)
    assert close(run[F1(micro=True)], f1_score(run[SentencePrecision(micro=True)], run[NuggetRecall(micro=True)]))


def test_report_without_bank_excluded_from_recall_means():
    # C: no bank, outcomes 3,3,3 -> P = 1, R = NaN. Precision means include C, recall means do not.
    c = report(sent(3), sent(3), sent(3), nuggets=None, request="qC")
    scores = two_report_run((c,))
    run = scores.runs["r1"]
    assert math.isnan(run.reports["qC"][NuggetRecall]) and math.isnan(run.reports["qC"][F1])
    assert close(run[SentencePrecision], (1 / 4 + 1 + 1) / 3)
    assert close(run[SentencePrecision(micro=True)], (1 + 2 + 3) / (4 + 2 + 3))
    assert close(run[NuggetRecall], 0.625)                 # A and B only
    assert close(run[NuggetRecall(micro=True)], 2 / 3)     # pooled over A and B only
    assert close(run[F1], 25 / 42)
    assert "run r1 request qC: no nugget bank; recall undefined" in scores.warnings
    assert any("recall undefined for 1 of 3" in w for w in scores.warnings)


def test_run_without_any_bank_has_nan_recall_aggregates():
    scores = score_judgments([report(sent(3), nuggets=None), report(sent(1), nuggets=None, request="q2")])
    run = scores.runs["r1"]
    for name in ("NuggetRecall", "NuggetRecall(micro=True)", "F1", "F1(micro=True)",
                 "NuggetRecall(micro=True,weighted=True)"):
        assert math.isnan(run[name]), name
    assert close(run[SentencePrecision], 0.5)


def test_run_with_only_neutral_sentences_flags_micro_precision():
    scores = score_judgments([report(sent(2)), report(sent(4), request="q2")])
    run = scores.runs["r1"]
    assert run[SentencePrecision] == 0.0 and run[SentencePrecision(micro=True)] == 0.0
    assert run[PrecisionUndefined] == 2
    assert any("micro sentence precision undefined" in w for w in scores.warnings)


# ------------------------------------------------------------------------------------------ Auto-ARGUE

def auto_argue_report(request: str = "q1") -> ReportJudgment:
    yes, no = True, False
    return report(
        # s0: two docs, d1 supports, d2 does not; answers_nugget asked -> both pairs relevant.
        sent(3, cites=("d1", "d2"), earned=(ea("n1", "a"),), decisions=(
            decision("supports_citation", yes, "d1"), decision("supports_citation", no, "d2"),
            decision("answers_nugget", yes, "d1"))),
        # s1: unsupported; an undecided record (verdict None) adds nothing.
        sent(1, cites=("d3",), decisions=(
            decision("supports_citation", None, "d3"), decision("supports_citation", no, "d3"))),
        # s2: one joint decision over d4 and d5 -> two supported pairs; no nugget question -> not relevant.
        sent(2, cites=("d4", "d5"), decisions=(decision("supports_citation", yes, "d4", "d5"),)),
        # s3: uncited, no citation needed.
        sent(4),
        # s4: cited, supported, but no decision records (outcome-only human label): sentence support only.
        sent(2, cites=("d6",)),
        # s5: cited, unsupported, only an undecided record: no decided pair, one irrelevant pair.
        sent(1, cites=("d7",), decisions=(decision("supports_citation", None, "d7"),)),
        # s6: a decision with empty doc_ids covers every cited document.
        sent(2, cites=("d8", "d9", "d8"), decisions=(decision("supports_citation", yes),)),
        request=request,
    )


def test_auto_argue_measures():
    scores = score_report(auto_argue_report())
    # sentence_support: cited s0 s1 s2 s4 s5 s6 = 6; supported (outcome 2/3) s0 s2 s4 s6 = 4.
    assert close(scores[SentenceSupport], 4 / 6)
    # citation_support: decided pairs (s0,d1)+ (s0,d2)- (s1,d3)- (s2,d4)+ (s2,d5)+ (s6,d8)+ (s6,d9)+ -> 5/7.
    assert close(scores[CitationSupport], 5 / 7)
    # citation_relevance: sentences with decisions s0 (2 pairs, relevant) s1 (1) s2 (2) s5 (1) s6 (2 distinct)
    # -> 2 / 8.
    assert close(scores[CitationRelevance], 2 / 8)
    # ARGUE's snake_case aliases give the same values.
    assert scores["nugget_recall"] == scores[NuggetRecall] == 1.0
    assert scores["argue_f1"] == scores[F1]
    # The Auto-ARGUE names are measures in their own right, no longer aliases of the ones above:
    # sentence_support: every citation must support -> s2, s4 (outcome 2, no decision), s6 of the 6 cited = 1/2;
    # citation_support: supporting / all 9 distinct citations: d1 d4 d5 d6 d8 d9 = 6/9.
    theirs_support, theirs_citations = scores["autoargue.sentence_support"], scores["autoargue.citation_support"]
    assert close(theirs_support, 3 / 6) and scores[SentenceSupport] != theirs_support
    assert close(theirs_citations, 6 / 9) and scores[CitationSupport] != theirs_citations
    # Without the bank's answer references Auto-ARGUE's relevance and coverage cannot be computed.
    for name in ("autoargue.citation_relevance", "autoargue.nugget_coverage", "autoargue.f1"):
        assert math.isnan(scores[name]), name
    # precision: #3 = 1, #1 = 2 -> 1/3
    assert close(scores[SentencePrecision], 1 / 3)


def test_auto_argue_undefined_without_citations_and_micro():
    plain = report(sent(4), sent(8, earned=(ea("x"),)), nuggets=[nug("x", absence=True)], request="q2")
    scores = score_report(plain)
    for m in (SentenceSupport, CitationSupport, CitationRelevance):
        assert math.isnan(scores[m]), m
    run = score_judgments([auto_argue_report(), plain]).runs["r1"]
    assert close(run[SentenceSupport], 4 / 6)                         # NaN skipped in the macro mean
    assert close(run[SentenceSupport(micro=True)], 4 / 6)
    assert close(run[CitationSupport(micro=True)], 5 / 7)
    other = auto_argue_report("q3").model_copy(update={"sentences": auto_argue_report().sentences[:2]})
    run = score_judgments([auto_argue_report(), other]).runs["r1"]
    # q1 sentence_support 4/6, q3 (s0, s1) 1/2: macro (4/6 + 1/2)/2 = 7/12, micro (4 + 1)/(6 + 2) = 5/8.
    assert close(run[SentenceSupport], 7 / 12)
    assert close(run[SentenceSupport(micro=True)], 5 / 8)


def test_cited_sentence_with_uncited_outcome_is_left_out_and_warned():
    scores = score_report(report(sent(5, cites=("d1",)), sent(2, cites=("d2",))))
    assert close(scores[SentenceSupport], 1.0)
    assert any("does not match whether they cite" in w for w in scores.warnings)


# ------------------------------------------------------------------------------------- measure names

@pytest.mark.parametrize("measure", list(dict.fromkeys(MEASURES + AGGREGATE_MEASURES)), ids=repr)
def test_parse_round_trip(measure):
    assert parse_measure(repr(measure)) == measure
    assert repr(measure) == measure.name == str(measure)


@pytest.mark.parametrize("alias, measure", sorted(ALIASES.items()))
def test_aliases_parse_to_canonical(alias, measure):
    assert parse_measure(alias) == measure
    assert alias in measure.aliases


@pytest.mark.parametrize("text, measure", [
    ("NuggetRecall(weighted=True)", NuggetRecall(weighted=True)),
    (" NuggetRecall ( weighted = true , micro=True ) ", NuggetRecall(micro=True, weighted=True)),
    ("NuggetRecall(weighted=False)", NuggetRecall),
    ("F1()", F1),
    ("nugget_recall(micro=True)", NuggetRecall(micro=True)),
    ("nugget_recall_weighted(micro=True)", NuggetRecall(weighted=True, micro=True)),
    ("OutcomeCount(outcome=+3)", OutcomeCount(outcome=3)),
])
def test_parse_variants(text, measure):
    assert parse_measure(text) == measure


def test_measure_equality_and_names():
    assert NuggetRecall(weighted=True) == NuggetRecall(weighted=True)
    assert NuggetRecall(weighted=True) != NuggetRecall and F1(weighted=True) != NuggetRecall(weighted=True)
    assert F1(weighted=False) == F1
    assert repr(NuggetRecall(weighted=True, micro=True)) == "NuggetRecall(micro=True,weighted=True)"
    assert len({NuggetRecall, NuggetRecall(weighted=False), parse_measure("nugget_recall")}) == 1
    assert all(isinstance(m, Measure) and type(m).__doc__ for m in MEASURES)
    assert "Mayfield" in type(SentencePrecision).__doc__ and "Walden" in type(CitationSupport).__doc__
    assert len({m.name for m in MEASURES}) == len(MEASURES)


def test_no_two_measure_names_differ_by_letter_case_or_underscores_alone():
    # F1 / f1 and SentenceSupport / sentence_support were two computations each, told apart by case.
    measures = {m.name: m for m in MEASURES} | dict(ALIASES)   # a name -> the measure it parses to
    folded: dict[str, set[str]] = {}
    for name in measures:
        folded.setdefault(name.replace("_", "").lower(), set()).add(name)
    for spellings in folded.values():
        assert len({measures[n] for n in spellings}) == 1, spellings   # alias spellings of one measure only


@pytest.mark.parametrize("alias", ["sentence_precision", "nugget_recall", "nugget_recall_weighted", "argue_f1"])
def test_an_alias_is_one_canonical_measure_never_written(alias):
    measure = parse_measure(alias)
    assert measure.name != alias and alias not in {m.name for m in MEASURES + AGGREGATE_MEASURES}
    assert alias in measure.aliases


@pytest.mark.parametrize("bad", [
    "Bogus", "", "NuggetRecall(weighted=yes)", "NuggetRecall(cutoff=5)", "NuggetRecall(weighted=1)",
    "OutcomeCount", "OutcomeCount(outcome=9)", "OutcomeCount(outcome=True)", "Sentences(micro=True)",
    "NuggetRecall(weighted=True,weighted=False)", "NuggetRecall(weighted=True", "__import__('os').getcwd()",
    "autoargue.nugget_coverage_weighted(weighted=False)", "F1(weighted=True)x",
    "nugget_recall_weighted(weighted=False)", "autoargue.F1", "autoargue.", ".f1", "autoargue.f1.x",
])
def test_bad_names_raise_value_error(bad):
    with pytest.raises(ValueError) as info:
        parse_measure(bad)
    message = str(info.value)
    assert "known measures" in message and "SentencePrecision" in message and "NuggetRecall(weighted=True)" in message


# ------------------------------------------------------------------------------------------------ rows

def test_rows_sorted_parseable_and_complete(tmp_path):
    judgments = [report(sent(3), run="zeta", request="q2"), report(sent(1), run="alpha", request="q9"),
                 report(sent(3), sent(1), run="alpha", request="q10")]
    scores = score_judgments(judgments)
    assert list(scores.runs) == ["alpha", "zeta"]
    rows = scores.rows()

    def text(rs):
        return [(r.run_id, r.request_id, r.metric, format_value(r.value)) for r in rs]

    assert text(rows) == text(score_judgments(reversed(judgments)).rows())   # input order does not matter
    alpha = [r for r in rows if r.run_id == "alpha"]
    assert [r.request_id for r in alpha] == ["q10"] * len(MEASURES) + ["q9"] * len(MEASURES) + [ALL] * len(
        AGGREGATE_MEASURES)
    for row in rows:
        measure = parse_measure(row.metric)
        assert measure.name == row.metric
        assert not measure.micro or row.request_id == ALL
    assert sum(r.metric == "SentencePrecision(micro=True)" for r in rows) == 2
    write_scores(tmp_path / "scores.tsv", rows)
    back = read_scores(tmp_path / "scores.tsv")
    assert text(back) == text(rows)


def test_duplicate_report_and_reserved_request_id_rejected():
    with pytest.raises(InputError, match="two judgments"):
        score_judgments([report(sent(3)), report(sent(1))])
    with pytest.raises(InputError, match="reserved"):
        score_judgments([report(sent(3), request=ALL)])
