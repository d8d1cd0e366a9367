"""Calibration statistics against hand-computed values and independent references (scipy, sklearn if present),
plus the calibration report writer on synthetic results."""

from __future__ import annotations

import base64
import html
import itertools
import json
import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from scipy import stats as sps

from judge.calibration.importers import CalibrationItem
from judge.calibration.report import (
    CalibrationResults,
    load_calibration_json,
    render_html,
    results_json,
    write_calibration_report,
)
from judge.calibration.stats import (
    RunScore,
    agreement_by_decision,
    cohen_kappa,
    compare_prompts,
    compare_prompts_on_items,
    correlate,
    correlate_by_key,
    decision_agreement,
    leaderboard_correlation,
    mcnemar_exact,
    mcnemar_p,
    mcnemar_power_warning,
    min_detectable_difference,
    pairwise_significance_agreement,
    run_summaries,
    tie_groups,
    within_one_se,
)


def _expand(table: dict[tuple[str, str], int]) -> tuple[list[str], list[str]]:
    human, judge = [], []
    for (h, j), count in table.items():
        human += [h] * count
        judge += [j] * count
    return human, judge


# Rows human, columns judge:      judge yes  judge no
#                     human yes       20         5      (25)
#                     human no        10        15      (25)
#                                    (30)      (20)     n = 50
# p_o = (20 + 15) / 50 = 0.7
# p_e = (25*30 + 25*20) / 50^2 = (750 + 500) / 2500 = 0.5
# kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
TABLE_2X2 = {("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15}


# --- decision level ----------------------------------------------------------------------------------------------

def test_kappa_on_known_2x2_table():
    human, judge = _expand(TABLE_2X2)
    r = decision_agreement(human, judge, labels=["yes", "no"], n_boot=0)
    assert r.confusion == [[20, 5], [10, 15]]
    assert r.kappa == pytest.approx(0.4)
    assert cohen_kappa(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4)
    assert r.accuracy == pytest.approx(0.7)
    # recall yes = 20/25 = 0.8, recall no = 15/25 = 0.6 -> balanced accuracy 0.7
    assert r.balanced_accuracy == pytest.approx(0.7)
    yes, no = r.per_class
    assert (yes.label, yes.support, yes.predicted) == ("yes", 25, 30)
    assert yes.precision == pytest.approx(20 / 30) and yes.recall == pytest.approx(0.8)
    assert yes.f1 == pytest.approx(2 * (2 / 3) * 0.8 / (2 / 3 + 0.8))
    assert no.precision == pytest.approx(15 / 20) and no.recall == pytest.approx(0.6)
    try:
        from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score
    except ImportError:
        return
    assert r.kappa == pytest.approx(cohen_kappa_score(human, judge))
    assert r.balanced_accuracy == pytest.approx(balanced_accuracy_score(human, judge))


def test_balanced_accuracy_three_classes_by_hand():
    # human a: 4 items, judge a a a b -> recall 3/4
    # human b: 2 items, judge b c    -> recall 1/2
    # human c: 4 items, judge c c c c -> recall 1
    # balanced accuracy = (0.75 + 0.5 + 1) / 3 = 0.75; accuracy = 8/10
    human = list("aaaabbcccc")
    judge = list("aaabbccccc")
    r = decision_agreement(human, judge, n_boot=0)
    assert r.labels == ["a", "b", "c"]
    assert r.balanced_accuracy == pytest.approx(0.75)
    assert r.accuracy == pytest.approx(0.8)
    # kappa: p_o = 0.8; rows 4,2,4; cols 3,2,5; p_e = (12 + 4 + 20) / 100 = 0.36; kappa = 0.44 / 0.64
    assert r.kappa == pytest.approx(0.44 / 0.64)


def test_class_only_the_judge_uses_is_not_in_balanced_accuracy():
    r = decision_agreement(["a", "a", "b", "b"], ["a", "x", "b", "b"], labels=["a", "b", "x"], n_boot=0)
    x = r.per_class[2]
    assert x.recall is None and x.precision == 0.0 and x.f1 is None
    assert r.balanced_accuracy == pytest.approx((0.5 + 1.0) / 2)


def test_kappa_ci_contains_estimate_and_is_reproducible():
    human, judge = _expand(TABLE_2X2)
    a = decision_agreement(human, judge, n_boot=2000, seed=7)
    b = decision_agreement(human, judge, n_boot=2000, seed=7)
    c = decision_agreement(human, judge, n_boot=2000, seed=8)
    assert a.kappa_ci_low < a.kappa < a.kappa_ci_high
    assert (a.kappa_ci_low, a.kappa_ci_high) == (b.kappa_ci_low, b.kappa_ci_high)
    assert (a.kappa_ci_low, a.kappa_ci_high) != (c.kappa_ci_low, c.kappa_ci_high)
    assert a.boot_undefined == 0
    # Asymptotic SE of kappa here is about 0.13, so the 95% interval is roughly 0.4 +- 0.26.
    assert 0.05 < a.kappa_ci_low < 0.25 and 0.55 < a.kappa_ci_high < 0.75
    narrow = decision_agreement(human, judge, n_boot=2000, seed=7, ci=0.5)
    assert a.kappa_ci_low < narrow.kappa_ci_low < narrow.kappa_ci_high < a.kappa_ci_high


def test_kappa_undefined_and_degenerate_resamples():
    # Both raters put everything in one class: p_e = 1, kappa undefined, no CI.
    r = decision_agreement(["y"] * 5, ["y"] * 5, n_boot=100)
    assert r.kappa is None and r.kappa_ci_low is None and r.kappa_ci_high is None
    assert r.accuracy == 1.0
    # Three items, perfect agreement: kappa 1; a resample is degenerate when it draws only y (prob (2/3)^3)
    # or only n (prob (1/3)^3): 1/3 of the resamples on average, left out of the CI and counted.
    r = decision_agreement(["y", "y", "n"], ["y", "y", "n"], n_boot=3000, seed=1)
    assert r.kappa == pytest.approx(1.0)
    assert r.boot_undefined / 3000 == pytest.approx(1 / 3, abs=0.03)
    assert r.kappa_ci_low == r.kappa_ci_high == pytest.approx(1.0)


def test_failed_items_are_counted_listed_and_excluded():
    human, judge = _expand(TABLE_2X2)
    human = human + ["yes", "no", "no"]
    judge = judge + [None, None, None]
    ids = [f"item{i}" for i in range(len(human))]
    r = decision_agreement(human, judge, labels=["yes", "no"], item_ids=ids, n_boot=0)
    assert r.n_total == 53 and r.n == 50 and r.failed == 3
    assert r.failed_ids == ["item50", "item51", "item52"]
    assert r.kappa == pytest.approx(0.4) and r.confusion == [[20, 5], [10, 15]]
    every_failed = decision_agreement(["yes"], [None], n_boot=10)
    assert every_failed.n == 0 and every_failed.accuracy is None and every_failed.kappa is None


def test_unknown_label_and_bad_input_raise():
    with pytest.raises(ValueError, match="not among labels"):
        decision_agreement(["a"], ["z"], labels=["a", "b"])
    with pytest.raises(ValueError, match="length"):
        decision_agreement(["a"], ["a", "b"])


def test_breakdown_by_group():
    human = ["y", "y", "n", "n", "y", "n"]
    judge = ["y", "y", "n", "n", "n", None]
    r = decision_agreement(human, judge, groups=["g1", "g1", "g1", "g1", "g2", None], n_boot=50)
    assert sorted(r.by_group) == ["(none)", "g1", "g2"]
    assert r.by_group["g1"].accuracy == 1.0 and r.by_group["g1"].kappa == pytest.approx(1.0)
    assert r.by_group["g2"].accuracy == 0.0
    assert r.by_group["(none)"].failed == 1 and r.by_group["(none)"].n == 0
    assert r.by_group["g1"].labels == r.labels == ["n", "y"]


def test_agreement_by_decision_counts_missing_predictions_as_failed():
    items = [CalibrationItem(item_id=f"s{i}", decision="supports_citation", claim="c", human_label=lab)
             for i, lab in enumerate(["supported", "not_supported", "supported"])]
    items.append(CalibrationItem(item_id="n1", decision="needs_citation", claim="c", human_label="needs_citation"))
    preds = {"s0": "supported", "s1": "supported", "n1": "no_citation_needed"}
    res = agreement_by_decision(items, preds, n_boot=0)
    assert list(res) == ["needs_citation", "supports_citation"]
    sc = res["supports_citation"]
    assert sc.labels == ["supported", "not_supported"] and sc.failed_ids == ["s2"]
    assert sc.confusion == [[1, 0], [1, 0]]
    assert res["needs_citation"].labels == ["needs_citation", "no_citation_needed"]


# --- report level -------------------------------------------------------------------------------------------------

def test_kendall_tau_b_with_ties_by_hand_and_scipy():
    # x = 1 2 2 3, y = 1 3 2 2. Of the 6 pairs: (0,1) (0,2) (0,3) concordant; (1,3) discordant;
    # (1,2) tied in x only; (2,3) tied in y only.  tau_b = (C - D) / sqrt((n0 - n1)(n0 - n2))
    # = (3 - 1) / sqrt((6 - 1)(6 - 1)) = 0.4
    x, y = [1, 2, 2, 3], [1, 3, 2, 2]
    r = correlate(x, y)
    assert r.kendall_tau_b == pytest.approx(0.4)
    ref = sps.kendalltau(x, y, variant="b")
    assert r.kendall_tau_b == pytest.approx(ref.statistic) and r.kendall_p == pytest.approx(ref.pvalue)
    assert r.spearman == pytest.approx(sps.spearmanr(x, y).statistic)
    assert r.pearson == pytest.approx(sps.pearsonr(x, y).statistic)
    assert r.n == 4 and r.n_nan == 0


def test_correlation_excludes_and_counts_nan_pairs():
    nan = float("nan")
    r = correlate([1, 2, nan, 3, 4], [1, 3, 5, nan, 4])
    assert r.n == 3 and r.n_nan == 2
    assert r.spearman == pytest.approx(sps.spearmanr([1, 2, 4], [1, 3, 4]).statistic)
    constant = correlate([1, 1, 1], [1, 2, 3])
    assert constant.pearson is None and constant.kendall_tau_b is None
    keyed = correlate_by_key({"a": 1.0, "b": 2.0, "c": 3.0, "x": 9.0}, {"a": 1.0, "b": 2.5, "c": 2.0, "y": 1.0})
    assert keyed.n == 3 and keyed.n_missing == 2


# --- run level: tie handling ----------------------------------------------------------------------------------------

def test_within_one_se_is_inclusive_and_uses_the_larger_se():
    assert within_one_se(RunScore(0.5, 0.1), RunScore(0.4, 0.0))  # |d| = 0.1 <= max(0.1, 0)
    assert within_one_se(RunScore(0.5, 0.0), RunScore(0.4, 0.1))
    assert not within_one_se(RunScore(0.5, 0.05), RunScore(0.4, 0.05))


def test_tie_groups_are_connected_components():
    # A ~ B (0.08 <= 0.1) and B ~ C (0.07 <= 0.1) but not A ~ C (0.15 > 0.1): one group by chaining.
    board = {"A": RunScore(1.0, 0.1), "B": RunScore(0.92, 0.01), "C": RunScore(0.85, 0.1), "D": RunScore(0.5, 0.01)}
    assert tie_groups(board) == [["A", "B", "C"], ["D"]]


def test_leaderboard_tie_handling_on_small_board():
    # Human board: A > B > C > D, all far apart (no ties). Judge board: B and C within one SE -> tied.
    # Judge ranking is A B C D or A C B D, each with probability 1/2.
    #   identical: tau = 1, rho = 1
    #   B/C swapped: tau = (5 - 1) / 6 = 2/3, rho = 1 - 6 * (1 + 1) / (4 * 15) = 0.8
    # mean tau = 5/6, std tau = 1/6; mean rho = 0.9, std rho = 0.1.
    judge = {"A": (0.9, 0.01), "B": (0.5, 0.1), "C": (0.45, 0.1), "D": (0.1, 0.01)}
    human = {"A": (0.8, 0.01), "B": (0.6, 0.01), "C": (0.4, 0.01), "D": (0.2, 0.01), "E": (0.0, 0.0)}
    r = leaderboard_correlation(judge, human, repetitions=4000, seed=3)
    assert r.judge_tie_groups == [["A"], ["B", "C"], ["D"]]
    assert r.human_tie_groups == [["A"], ["B"], ["C"], ["D"]]
    assert r.missing_runs == ["E"] and r.n_runs == 4
    assert r.kendall_tau_mean == pytest.approx(5 / 6, abs=0.01)
    assert r.kendall_tau_std == pytest.approx(1 / 6, abs=0.01)
    assert r.spearman_rho_mean == pytest.approx(0.9, abs=0.006)
    assert r.spearman_rho_std == pytest.approx(0.1, abs=0.006)
    # Every repetition is one of the two cases.
    assert r.kendall_tau_b_raw == pytest.approx(1.0) and r.spearman_rho_raw == pytest.approx(1.0)
    again = leaderboard_correlation(judge, human, repetitions=4000, seed=3)
    assert again == r


def test_leaderboard_components_mode_matches_enumeration():
    # Both boards have ties; the expectation over repetitions must equal the average over every combination of
    # within-group orders (enumerated here independently with scipy's kendalltau).
    judge = {"A": (0.9, 0.05), "B": (0.88, 0.05), "C": (0.5, 0.01), "D": (0.3, 0.1), "E": (0.25, 0.1)}
    human = {"A": (0.7, 0.01), "B": (0.8, 0.01), "C": (0.4, 0.1), "D": (0.35, 0.1), "E": (0.1, 0.01)}
    r = leaderboard_correlation(judge, human, repetitions=20000, seed=0, tie_mode="components")
    runs = sorted(judge)

    def orders(groups):
        for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
            flat = [run for perm in perms for run in perm]
            yield [flat.index(run) for run in runs]

    taus = [sps.kendalltau(a, b).statistic for a in orders(r.judge_tie_groups) for b in orders(r.human_tie_groups)]
    assert r.judge_tie_groups == [["A", "B"], ["C"], ["D", "E"]]
    assert r.human_tie_groups == [["B"], ["A"], ["C", "D"], ["E"]]
    assert r.kendall_tau_mean == pytest.approx(float(np.mean(taus)), abs=0.01)


CHAIN_JUDGE = {"A": (1.0, 0.1), "B": (0.92, 0.01), "C": (0.85, 0.1)}
CHAIN_HUMAN = {"A": (0.9, 0.01), "B": (0.5, 0.01), "C": (0.1, 0.01)}


def test_leaderboard_pairwise_mode_on_a_chain_by_hand():
    # Judge: A ~ B (0.08 <= 0.1), B ~ C (0.07 <= 0.1), but A clearly above C (0.15 > 0.1). Human: A > B > C.
    # pairwise: random topological sort. First pick among {A, B} (C has A above it):
    #   A (1/2), then B or C (1/2 each): ABC 1/4 (tau 1, rho 1), ACB 1/4 (tau 1/3, rho 0.5)
    #   B (1/2), then A, then C:         BAC 1/2 (tau 1/3, rho 0.5)
    #   mean tau = 1/4 + 1/12 + 1/6 = 0.5; mean rho = 1/4 + 1/8 + 1/4 = 0.625
    # components: {A, B, C} is one group, all 6 orders equally likely: the tie-broken order is a draw, so its tau and
    # rho (expected 0) measure the draw, not the judge: undefined, with the reason.
    pw = leaderboard_correlation(CHAIN_JUDGE, CHAIN_HUMAN, repetitions=8000, seed=2)
    assert pw.tie_mode == "pairwise" and pw.judge_tied_pairs == 2 and pw.human_tied_pairs == 0
    assert pw.kendall_tau_mean == pytest.approx(0.5, abs=0.015)
    assert pw.spearman_rho_mean == pytest.approx(0.625, abs=0.015)
    comp = leaderboard_correlation(CHAIN_JUDGE, CHAIN_HUMAN, repetitions=8000, seed=2, tie_mode="components")
    assert comp.judge_tie_groups == [["A", "B", "C"]]
    assert comp.kendall_tau_mean is None and comp.spearman_rho_mean is None and comp.kendall_tau_std is None
    assert comp.undefined["kendall_tau_mean"].startswith("every run tied on the judge leaderboard")
    assert comp.kendall_tau_b_raw is not None  # the plain means are not tied


def test_leaderboard_pairwise_mode_matches_exact_expectation():
    # Exact expectation of tau under the random topological sort, by recursion over the placement steps.
    judge = {"A": (0.9, 0.05), "B": (0.86, 0.02), "C": (0.8, 0.05), "D": (0.5, 0.2), "E": (0.35, 0.01)}
    human = {"A": (0.7, 0.1), "B": (0.8, 0.01), "C": (0.62, 0.1), "D": (0.4, 0.01), "E": (0.45, 0.1)}
    runs = sorted(judge)

    def extensions(board):
        def above(a, b):
            return board[a][0] - board[b][0] > max(board[a][1], board[b][1])

        def rec(left, prefix, prob):
            if not left:
                yield prefix, prob
                return
            avail = [r for r in left if not any(above(o, r) for o in left if o != r)]
            for r in avail:
                yield from rec([x for x in left if x != r], prefix + [r], prob / len(avail))
        return list(rec(runs, [], 1.0))

    exact = sum(pj * ph * sps.kendalltau([oj.index(r) for r in runs], [oh.index(r) for r in runs]).statistic
                for oj, pj in extensions(judge) for oh, ph in extensions(human))
    r = leaderboard_correlation(judge, human, repetitions=20000, seed=4)
    assert r.kendall_tau_mean == pytest.approx(exact, abs=0.01)


def test_leaderboard_is_reproducible_and_validates():
    a = leaderboard_correlation(CHAIN_JUDGE, CHAIN_HUMAN, repetitions=50, seed=9)
    assert a == leaderboard_correlation(CHAIN_JUDGE, CHAIN_HUMAN, repetitions=50, seed=9)
    with pytest.raises(ValueError):
        leaderboard_correlation({"A": (float("nan"), 0.1)}, {"A": (0.1, 0.1)})
    with pytest.raises(ValueError):
        leaderboard_correlation(CHAIN_JUDGE, CHAIN_HUMAN, tie_mode="groups")  # type: ignore[arg-type]
    single = leaderboard_correlation({"A": (0.1, 0.0)}, {"A": (0.2, 0.0)})
    assert single.kendall_tau_mean is None and single.n_runs == 1


def test_run_summaries_mean_and_standard_error():
    s = run_summaries({"r1": {"q1": 1.0, "q2": 3.0, "q3": float("nan")}, "r2": {"q1": 2.0}, "r3": {}})
    assert s["r1"].mean == 2.0 and s["r1"].se == pytest.approx(math.sqrt(2) / math.sqrt(2))
    assert s["r2"] == RunScore(2.0, 0.0) and "r3" not in s


# --- run level: pairwise significance -------------------------------------------------------------------------------

def test_pairwise_significance_agreement_on_constructed_example():
    base = [0.2, 0.4, 0.3, 0.5, 0.6, 0.1]
    d = [0.1, 0.2, 0.15, 0.12, 0.18, 0.11]  # all positive, distinct magnitudes
    reqs = [f"q{i}" for i in range(6)]

    def run(values):
        return dict(zip(reqs, values))

    plus = [b + x for b, x in zip(base, d)]
    human = {"A": run(plus), "B": run(base), "C": run(base)}
    judge = {"A": run(plus), "B": run(base), "C": run(plus), "Z": run(base)}  # Z: judge only, ignored
    # Human: A>B win, A>C win, B=C tie (all-zero differences).
    # Judge: A>B win, A=C tie (all-zero), B<C loss.
    r = pairwise_significance_agreement(judge, human)
    assert r.n_runs == 3
    outcome = {(p.run_a, p.run_b): p for p in r.pairs}
    assert (outcome["A", "B"].human_ttest, outcome["A", "B"].judge_ttest) == ("win", "win")
    assert (outcome["A", "C"].human_ttest, outcome["A", "C"].judge_ttest) == ("win", "tie")
    assert (outcome["B", "C"].human_ttest, outcome["B", "C"].judge_ttest) == ("tie", "loss")
    # Exact Wilcoxon, n = 6, all ranks on one side: p = 2 / 2^6 = 0.03125 < 0.05.
    assert outcome["A", "B"].human_wilcoxon_p == pytest.approx(0.03125)
    assert outcome["B", "C"].judge_wilcoxon == "loss"
    assert outcome["A", "B"].human_ttest_p == pytest.approx(sps.ttest_rel(plus, base).pvalue)
    for test in (r.ttest, r.wilcoxon):
        # rows human (win, loss, tie), columns judge
        assert test.table == [[1, 0, 1], [0, 0, 0], [0, 1, 0]]
        assert test.agreement == pytest.approx(1 / 3) and test.n_pairs == 3


def test_pairwise_pairs_on_common_non_nan_requests():
    human = {"A": {"q1": 1.0, "q2": float("nan"), "q3": 0.5}, "B": {"q1": 0.0, "q2": 0.0, "q3": 0.5, "q4": 1.0}}
    judge = {"A": {"q1": 1.0, "q2": 1.0, "q3": 0.5}, "B": {"q1": 0.0, "q2": 0.0, "q3": 0.5}}
    r = pairwise_significance_agreement(judge, human)
    assert r.pairs[0].n_requests == 2  # q1, q3
    assert r.pairs[0].human_wilcoxon == "tie"  # one non-zero difference cannot be significant


# --- McNemar ------------------------------------------------------------------------------------------------------

def test_mcnemar_on_known_table():
    # b = 8 (A right, B wrong), c = 2. Exact two-sided p = 2 * P(X <= 2), X ~ Bin(10, 0.5)
    # = 2 * (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 2 * (1 + 10 + 45) / 1024 = 112 / 1024 = 0.109375
    a = [True] * 30 + [True] * 8 + [False] * 2 + [False] * 10
    b = [True] * 30 + [False] * 8 + [True] * 2 + [False] * 10
    r = mcnemar_exact(a, b)
    assert (r.n, r.both_right, r.b, r.c, r.both_wrong) == (50, 30, 8, 2, 10)
    assert r.p_value == pytest.approx(112 / 1024)
    assert r.accuracy_a == pytest.approx(38 / 50) and r.accuracy_b == pytest.approx(32 / 50)
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(0, 6) == pytest.approx(2 / 64)  # 0.03125
    assert mcnemar_p(5, 5) == 1.0


def test_mcnemar_too_few_items_rule():
    # 5 items: even 0 vs 5 gives p = 2/32 = 0.0625 -> nothing can ever be significant.
    assert "only 5 items" in mcnemar_power_warning(5, 0, 5)
    # 5 discordant of 100: p >= 0.0625 whatever the split.
    assert "no split" in mcnemar_power_warning(100, 5, 0)
    # 8 discordant: only 0 vs 8 reaches p < 0.05 (2/256); 1 vs 7 gives 2 * 9/256 = 0.0703.
    # Minimum detectable difference = 8 / 100.
    assert min_detectable_difference(100, 8) == pytest.approx(0.08)
    assert "little power" in mcnemar_power_warning(100, 4, 4) and "0.080" in mcnemar_power_warning(100, 4, 4)
    assert mcnemar_power_warning(100, 10, 10) is None
    assert min_detectable_difference(100, 5) is None


def test_compare_prompts_lists_flipped_items():
    ids = ["i1", "i2", "i3", "i4", "i5"]
    human = ["y", "y", "n", "n", "y"]
    a = ["y", "n", "n", None, "y"]
    b = ["n", "y", "n", "n", "y"]
    c = compare_prompts("supports_citation", ids, human, a, b, name_a="v1", name_b="v2")
    assert c.right_to_wrong == ["i1"] and c.wrong_to_right == ["i2"]
    assert c.failed_a == ["i4"] and c.failed_b == []
    assert c.mcnemar.n == 4 and c.mcnemar.b == 1 and c.mcnemar.c == 1 and c.mcnemar.warning
    items = [CalibrationItem(item_id=i, decision="supports_citation", claim="x", human_label=h)
             for i, h in zip(ids, human)]
    via_items = compare_prompts_on_items(items, dict(zip(ids, a)), dict(zip(ids, b)), name_a="v1", name_b="v2")
    assert via_items == [c]


# --- the report ----------------------------------------------------------------------------------------------------

def _synthetic_results() -> CalibrationResults:
    human, judge = _expand(TABLE_2X2)
    human += ["yes"]
    judge += [None]
    ids = [f"item|{i}" for i in range(len(human))]
    agree = decision_agreement(human, judge, labels=["yes", "no"], item_ids=ids,
                               groups=["g1"] * 26 + ["g2"] * 25, n_boot=200, seed=1)
    board_j = {"A": (0.9, 0.01), "B": (0.5, 0.1), "C": (0.45, 0.1), "D": (0.1, 0.01)}
    board_h = {"A": (0.8, 0.01), "B": (0.6, 0.01), "C": (0.4, 0.01), "D": (0.2, 0.01)}
    reqs = {"q1": 0.1, "q2": 0.5, "q3": 0.3}
    per_req = {r: {q: v + i for q, v in reqs.items()} for i, r in enumerate("AB")}
    return CalibrationResults(
        signature="argue-judge calibrate|model=x|seed=1",
        decisions={"supports_citation": agree},
        report_level={"sentence_precision": correlate([0.1, 0.5, 0.9, float("nan")], [0.2, 0.4, 0.8, 0.1])},
        run_level={"nugget_recall": leaderboard_correlation(board_j, board_h, repetitions=100, seed=0)},
        pairwise={"nugget_recall": pairwise_significance_agreement(per_req, per_req)},
        prompt_ab=[compare_prompts("supports_citation", ["x1", "x2", "x3"], ["yes", "no", "yes"],
                                   ["yes", "no", "no"], ["no", "no", "yes"], name_a="v1", name_b="v2")],
        notes=["wice: 191 partially_supported items excluded"],
    )


def test_report_writer(tmp_path):
    results = _synthetic_results()
    paths = write_calibration_report(results, tmp_path)
    names = sorted(p.name for p in paths)
    assert names == ["calibration.html", "calibration.json", "calibration.md", "confusion_supports_citation.png",
                     "kappa.png", "leaderboard_nugget_recall.png"]
    for p in paths:
        assert p.exists() and p.stat().st_size > 0
    assert (tmp_path / "kappa.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    md = (tmp_path / "calibration.md").read_text(encoding="utf-8")
    agree = results.decisions["supports_citation"]
    assert f"| supports_citation | 50 | 1 | 0.700 | 0.700 | 0.400 | [{agree.kappa_ci_low:.3f}, " \
           f"{agree.kappa_ci_high:.3f}] |" in md
    assert "| yes | 20 | 5 |" in md and "| no | 10 | 15 |" in md  # confusion matrix
    assert "Failed items (1 of 51): `item|50`" in md
    assert "| g1 |" in md and "| g2 |" in md
    assert "Tie components (judge): {B, C}" in md and "| pairwise | 1 / 0 |" in md
    assert "x1" in md and "x3" in md and "**Warning:**" in md  # flipped items and too-few warning
    assert "argue-judge calibrate|model=x|seed=1" in md
    assert "![κ per decision](kappa.png)" in md

    text = (tmp_path / "calibration.json").read_text(encoding="utf-8")
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert data["decisions"]["supports_citation"]["kappa"] == pytest.approx(0.4)
    loaded = load_calibration_json(tmp_path / "calibration.json")
    assert results_json(loaded) == text  # round trip is a fixed point
    assert loaded.decisions["supports_citation"].confusion == agree.confusion
    assert loaded.run_level["nugget_recall"].kendall_tau_mean == pytest.approx(
        results.run_level["nugget_recall"].kendall_tau_mean, abs=1e-6)
    assert loaded.report_level["sentence_precision"].n_nan == 1


def test_report_is_byte_identical_on_rerun(tmp_path):
    write_calibration_report(_synthetic_results(), tmp_path / "a", plots=False)
    write_calibration_report(_synthetic_results(), tmp_path / "b", plots=False)
    for name in ("calibration.md", "calibration.json", "calibration.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert not list((tmp_path / "a").glob("*.png"))
    assert "![" not in (tmp_path / "a" / "calibration.md").read_text(encoding="utf-8")
    assert "<img" not in (tmp_path / "a" / "calibration.html").read_text(encoding="utf-8")


def test_html_report_with_figures_is_byte_identical_on_rerun(tmp_path):
    write_calibration_report(_synthetic_results(), tmp_path / "a")
    write_calibration_report(_synthetic_results(), tmp_path / "b")
    assert (tmp_path / "a" / "calibration.html").read_bytes() == (tmp_path / "b" / "calibration.html").read_bytes()


class Page(HTMLParser):
    """The parts of an HTML page the structural tests look at."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: list[list[list[str]]] = []   # table -> rows -> cell texts (th and td)
        self.captions: list[str] = []
        self.headings: list[str] = []
        self._cell: list[str] | None = None
        self._capture: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("th", "td"):
            self._cell = []
        elif tag in ("caption", "h1", "h2", "h3"):
            self._capture = []

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "caption" and self._capture is not None:
            self.captions.append("".join(self._capture))
            self._capture = None
        elif tag in ("h1", "h2", "h3") and self._capture is not None:
            self.headings.append("".join(self._capture))
            self._capture = None

    def handle_data(self, data):
        for sink in (self._cell, self._capture):
            if sink is not None:
                sink.append(data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for t, attrs in self.tags if t == tag]


def test_html_report_is_self_contained_with_every_table_and_figure_inline(tmp_path):
    results = _synthetic_results()
    write_calibration_report(results, tmp_path)
    text = (tmp_path / "calibration.html").read_text(encoding="utf-8")
    page = Page(text)
    md = (tmp_path / "calibration.md").read_text(encoding="utf-8")

    assert text.startswith("<!DOCTYPE html>") and page.all("html") == [{"lang": "en"}]
    assert page.headings[0] == "Calibration report" and "supports_citation" in page.headings
    # the same tables as the Markdown, each captioned, with header cells scoped for screen readers
    assert len(page.tables) == md.count("\n|---") == 12
    assert "Human labels saved by prediction-powered inference" in page.headings
    assert len(page.captions) == len(page.tables) and all(page.captions)
    assert {a.get("scope") for a in page.all("th")} == {"col", "row"}
    kappa_ci = f"[{results.decisions['supports_citation'].kappa_ci_low:.3f}, " \
               f"{results.decisions['supports_citation'].kappa_ci_high:.3f}]"
    support = results.decisions["supports_citation"]
    # the failed item counted as wrong: the same right answers over all 50
    assert support.accuracy_failed_wrong == pytest.approx(support.accuracy * support.n / support.n_total)
    assert page.tables[0][1] == ["supports_citation", "50", "1", "0.700", "0.700", "0.400", kappa_ci,
                                 f"{support.accuracy_failed_wrong:.3f}", f"{support.kappa_failed_wrong:.3f}"]
    confusion = next(t for t, c in zip(page.tables, page.captions) if c.endswith("confusion matrix (rows: human, "
                                                                                   "columns: judge)"))
    assert confusion == [["human \\ judge", "yes", "no"], ["yes", "20", "5"], ["no", "10", "15"]]

    # every figure inline: the PNG written beside the report, byte for byte, as a data URI
    images = page.all("img")
    assert len(images) == 3
    written = {p.name: p.read_bytes() for p in tmp_path.glob("*.png")}
    inlined = sorted(base64.b64decode(img["src"].removeprefix("data:image/png;base64,")) for img in images)
    assert all(img["src"].startswith("data:image/png;base64,") and img["alt"] for img in images)
    assert inlined == sorted(written.values())

    # nothing fetched from anywhere: no scripts, no style sheets or fonts by URL, no links out
    assert not page.all("script") and not page.all("link") and not page.all("iframe")
    urls = [v for _, attrs in page.tags for k, v in attrs.items() if k in ("src", "href") and v]
    assert all(u.startswith("data:") for u in urls)
    outside_data = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", text)
    assert not re.search(r"https?:|url\(|@import|//[a-z]", outside_data, re.IGNORECASE)
    assert '<p class="warning" role="note"><strong>Warning:</strong>' in text  # the McNemar power warning


def test_html_report_escapes_hostile_labels_and_text():
    hostile = '<script>alert("x")</script>'
    results = _synthetic_results()
    agree = results.decisions.pop("supports_citation")
    agree = agree.model_copy(update={"labels": [hostile, "no"], "failed_ids": ['</code><img src=x onerror=alert(1)>']})
    results.decisions[hostile] = agree
    results.notes.append('note with <b onmouseover="alert(2)">markup</b> & an ampersand')
    results.signature = 'sig"><iframe src="https://evil.example/">'
    text = render_html(results, {"kappa": b"\x89PNG fake"})
    page = Page(text)

    assert "<script" not in text.lower() and "<iframe" not in text.lower() and "<b " not in text
    assert not any(k.startswith("on") for _, attrs in page.tags for k in attrs)
    assert not page.all("script") and not page.all("iframe") and len(page.all("img")) == 1
    assert html.escape(hostile) in text and hostile in page.headings            # shown as text, not run
    assert "&lt;b onmouseover=&quot;alert(2)&quot;&gt;markup&lt;/b&gt; &amp; an ampersand" in text
    assert page.tables[0][1][0] == hostile and any(row[0] == hostile for t in page.tables for row in t[1:])
    assert "&lt;/code&gt;&lt;img src=x onerror=alert(1)&gt;" in text
    assert page.all("img")[0]["src"] == "data:image/png;base64," + base64.b64encode(b"\x89PNG fake").decode()


def test_failures_counted_as_disagreements_by_hand():
    from judge.calibration.stats import decision_agreement

    human = ["yes", "yes", "no", "no", "yes", "no"]
    judge = ["yes", "no", "no", None, None, "no"]
    r = decision_agreement(human, judge, labels=["yes", "no"], n_boot=0)
    assert (r.n, r.failed, r.accuracy) == (4, 2, pytest.approx(3 / 4))
    # compared items only: [[1, 1], [0, 2]] -> p_o = 3/4, p_e = (2*1 + 2*3) / 16 = 1/2, kappa = 1/2
    assert r.kappa == pytest.approx(0.5)
    # all six, a failure being a judge column of its own: rows yes (1, 1, 1), no (0, 2, 1)
    # p_o = 3/6; p_e = (3*1 + 3*3 + 0*2) / 36 = 1/3; kappa = (1/2 - 1/3) / (2/3) = 1/4
    assert r.accuracy_failed_wrong == pytest.approx(3 / 6)
    assert r.kappa_failed_wrong == pytest.approx(0.25)
    # no failures: both views agree
    clean = decision_agreement(human, ["yes", "no", "no", "no", "yes", "no"], labels=["yes", "no"], n_boot=0)
    assert clean.kappa_failed_wrong == pytest.approx(clean.kappa)
    assert clean.accuracy_failed_wrong == pytest.approx(clean.accuracy)


# -- AutoJudge-style agreement: tau_AP,b and Kendall@k -------------------------------------------------------

def test_tau_ap_b_by_hand_on_a_ranking_with_a_tie():
    from judge.calibration.stats import tau_ap_b
    # judge a > b = c > d (b, c tied), humans a > b > c > d.
    # humans as reference: b has 1 run above (a), the judge puts a above b: 1/1; c has a, b above, the judge
    # puts only a strictly above (b tied): 1/2; d: 3/3. tau = 2 * (1 + 1/2 + 1) / 3 - 1 = 2/3.
    # judge as reference: above b are {a}, above c {a} (b is tied with c, not above), above d {a, b, c}; the
    # humans agree on all: tau = 1. tau_AP,b is the mean of the two directions: 5/6.
    assert tau_ap_b([3, 2, 2, 1], [4, 3, 2, 1]) == pytest.approx(5 / 6)
    assert tau_ap_b([1, 2, 3, 4], [1, 2, 3, 4]) == pytest.approx(1.0)
    assert tau_ap_b([4, 3, 2, 1], [1, 2, 3, 4]) == pytest.approx(-1.0)
    # top-weighted: a swap at the top costs more than the same swap at the bottom
    assert tau_ap_b([3, 4, 2, 1], [4, 3, 2, 1]) < tau_ap_b([4, 3, 1, 2], [4, 3, 2, 1])


def test_kendall_at_k_uses_the_humans_top_k_runs():
    from judge.calibration.stats import kendall_at_k
    human = [10, 9, 8, 7, 1]
    judge = [5, 4, 3, 2, 9]           # agrees on the top four, puts the humans' last run first
    assert kendall_at_k(judge, human, 4) == pytest.approx(1.0)
    assert kendall_at_k(judge, human, 5) < 0.5


def test_ranking_agreement_has_every_measure_with_a_bootstrap_interval():
    from judge.calibration.stats import ranking_agreement
    rng = np.random.default_rng(0)
    quality = np.linspace(0.2, 0.8, 6)
    human = {f"r{i}": {f"q{j}": float(q + rng.normal(0, 0.1)) for j in range(20)} for i, q in enumerate(quality)}
    judge = {r: {q: v + float(rng.normal(0, 0.05)) for q, v in vs.items()} for r, vs in human.items()}
    a = ranking_agreement(judge, human, k=3, bootstrap=200, seed=1)
    assert (a.n_runs, a.n_requests, a.k) == (6, 20, 3)
    assert set(a.coefficients) == {"kendall", "spearman", "pearson", "tauap_b", "kendall@k"}
    for c in a.coefficients.values():
        assert c.value is not None and c.low <= c.value + 1e-9 and c.value - 1e-9 <= c.high <= 1
    assert a.coefficients["kendall"].value > 0.7
    assert ranking_agreement(judge, human, k=3, bootstrap=200, seed=1) == a
