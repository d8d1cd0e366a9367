"""A statistic the data cannot give is said as undefined, with its reason, in every table of the calibration report
and in calibration.json: never as a number (a tie-broken tau of -0.009 where every run is tied), never as a bare
dash. The cases below are built by the statistics functions themselves on degenerate samples."""

from __future__ import annotations

import json
import re

import pytest

from judge.calibration.report import render_html, render_markdown
from judge.calibration.results import CalibrationResults, load_calibration_json, results_json
from judge.calibration.stats import (
    Statistics,
    attack_comparison,
    compare_prompts,
    confidence_result,
    correlate,
    decision_agreement,
    leaderboard_correlation,
    mcnemar_exact,
    pairwise_significance_agreement,
    ranking_agreement,
    run_summaries,
    tau_ap_b,
)
from judge.calibration.stats.undefined import NOT_RECORDED

# Three runs over four requests whose per-request values scatter so widely that every run is within one standard
# error of every other, on both sides: the boards are all ties.
TIED_JUDGE = {"a": {"q1": 0.1, "q2": 0.9, "q3": 0.2, "q4": 0.8}, "b": {"q1": 0.8, "q2": 0.2, "q3": 0.9, "q4": 0.1},
              "c": {"q1": 0.5, "q2": 0.45, "q3": 0.55, "q4": 0.52}}
TIED_HUMAN = {"a": {"q1": 0.0, "q2": 1.0, "q3": 0.0, "q4": 1.0}, "b": {"q1": 1.0, "q2": 0.0, "q3": 1.0, "q4": 0.0},
              "c": {"q1": 0.0, "q2": 1.0, "q3": 1.0, "q4": 0.0}}


def test_every_run_tied_on_both_sides_leaves_the_tie_broken_coefficients_undefined():
    board = leaderboard_correlation(run_summaries(TIED_JUDGE), run_summaries(TIED_HUMAN), repetitions=400, seed=0)
    assert board.judge_tied_pairs == board.human_tied_pairs == 3
    for name in ("kendall_tau_mean", "kendall_tau_std", "spearman_rho_mean", "spearman_rho_std"):
        assert getattr(board, name) is None
        assert board.why(name).startswith("every run tied on the judge leaderboard")
    # the humans' means are all 0.5: constant, so the raw coefficients are undefined too, for that reason
    assert board.kendall_tau_b_raw is None and board.why("kendall_tau_b_raw") == "every human value is the same"


def test_the_run_level_table_says_undefined_where_the_agreement_table_does():
    board = leaderboard_correlation(run_summaries(TIED_JUDGE), run_summaries(TIED_HUMAN), repetitions=400, seed=0)
    board = board.model_copy(update={"agreement": ranking_agreement(TIED_JUDGE, TIED_HUMAN, bootstrap=50)})
    markdown = render_markdown(CalibrationResults(signature="s", run_level={"F1": board}))
    row = next(line for line in markdown.splitlines() if line.startswith("| F1 | 3 | "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2].startswith("undefined (every run tied on the judge leaderboard")  # Kendall τ, was -0.0xx ± 0.5
    assert cells[3].startswith("undefined (every run tied on the judge leaderboard")  # Spearman ρ
    assert cells[4] == cells[5] == "undefined (every human value is the same)"        # raw τ-b and ρ
    agreement = next(line for line in markdown.splitlines() if line.startswith("| F1 | 3 | 4 | "))
    assert agreement.count("undefined (every human mean value is the same)") == 4  # tau_AP,b too, not 0
    assert not re.search(r"\| -?0\.\d{3} ± ", markdown)


def _degenerate_results() -> CalibrationResults:
    """One result of every kind, each on a sample that leaves some of its statistics undefined."""
    one_class = decision_agreement(["yes"] * 4 + ["no"], ["yes"] * 4 + [None], groups=["g"] * 4 + ["all failed"],
                                   labels=["yes", "no"], n_boot=50)
    one_request = {"a": {"q1": 0.2}, "b": {"q1": 0.7}}
    attacked = attack_comparison("note", "sentence", "supports_citation", ["i1"], ["supported"], [None],
                                 ["supported"], [None], ["rule"])
    return CalibrationResults(
        signature="s", decisions={"supports_citation": one_class},
        report_level={"F1": correlate([0.5, 0.5, 0.5], [0.1, 0.4, 0.9]), "P": correlate([0.3], [0.2])},
        run_level={"R": leaderboard_correlation({"a": (0.5, 0.1)}, {"a": (0.4, 0.1)}).model_copy(
            update={"agreement": ranking_agreement({"a": {"q1": 1.0}}, {"a": {"q1": 0.0}}, bootstrap=20)})},
        pairwise={"F1": pairwise_significance_agreement(one_request, one_request)},
        prompt_ab=[compare_prompts("supports_citation", ["i1"], ["supported"], [None], ["supported"])],
        redteam=[attacked],
        confidence={"supports_citation": confidence_result(["yes"], [None], [None])})


def _statistics(node, path="results"):
    """(path, model) for every Statistics model inside the results."""
    if isinstance(node, Statistics):
        yield path, node
    if hasattr(node, "model_fields"):
        for name in type(node).model_fields:
            yield from _statistics(getattr(node, name), f"{path}.{name}")
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _statistics(value, f"{path}[{key}]")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _statistics(value, f"{path}[{i}]")


def test_every_undefined_statistic_of_every_kind_carries_its_reason():
    results = _degenerate_results()
    undefined = {}
    for path, model in _statistics(results):
        for name in type(model).statistic_fields():
            if getattr(model, name) is None:
                undefined[f"{path}.{name}"] = model.undefined[name]
    assert NOT_RECORDED not in undefined.values()
    expected = {
        "results.decisions[supports_citation].kappa": "every item in one class on both sides",
        "results.decisions[supports_citation].kappa_ci_low": "κ is undefined (every item in one class on both sides)",
        "results.decisions[supports_citation].by_group[all failed].accuracy": "no item compared",
        "results.decisions[supports_citation].per_class[1].precision": "the judge never chose this class",
        "results.report_level[F1].spearman": "every judge value is the same",
        "results.report_level[P].kendall_p": "fewer than 2 pairs",
        "results.run_level[R].kendall_tau_mean": "fewer than 2 runs on both leaderboards",
        "results.run_level[R].agreement.coefficients[tauap_b].value": "fewer than 2 runs",
        "results.pairwise[F1].pairs[0].judge_ttest_p":
            "fewer than 2 requests both runs have in both tables (no p < 0.05 is possible)",
        "results.pairwise[F1].ttest.agreement": "no pair of runs shares the 2 requests the test needs",
        "results.pairwise[F1].wilcoxon.agreement": "no pair of runs shares the 6 requests the test needs",
        "results.prompt_ab[0].mcnemar.p_value": "no item compared",
        "results.redteam[0].mcnemar_p": "no item labelled on both sides",
        "results.redteam[0].kappa": "no item compared",
        "results.confidence[supports_citation].ece": "no judged item with a confidence",
    }
    assert {k: undefined.get(k) for k in expected} == expected


def _statistic_cells(markdown: str) -> list[str]:
    """The cells of the report's statistics tables. Left out: the section on prediction-powered inference (it
    derives its figures from the agreement results, outside these statistics) and the red team's "withheld to
    clean" column, whose dash means "not measured under --on-injection flag", as its paragraph says."""
    cells: list[str] = []
    header: list[str] = []
    section = ""
    for line in markdown.splitlines():
        if line.startswith("## "):
            section = line
        if not line.startswith("|") or "prediction-powered" in section or set(line) <= set("|-: "):
            header = [] if not line.startswith("|") else header
            continue
        row = [c.strip() for c in line.strip("|").split("|")]
        if not header:
            header = row
            continue
        cells += [c for h, c in zip(header, row) if h != "withheld to clean"]
    return cells


def test_the_report_and_its_json_say_undefined_with_the_reason_and_never_a_bare_dash(tmp_path):
    results = _degenerate_results()
    markdown = render_markdown(results)
    assert "–" not in _statistic_cells(markdown) and "undefined" not in _statistic_cells(markdown)
    assert "| no item compared" not in markdown  # a reason stands inside "undefined (...)", never alone
    for reason in ("no item compared", "every item in one class on both sides", "fewer than 2 pairs",
                   "no item labelled on both sides", "no judged item with a confidence"):
        assert f"undefined ({reason})" in markdown
    assert "undefined (every item in one class on both sides)" in render_html(results)
    # The prompt A/B and red-team p-values with nothing compared were printed as 1.0000
    assert "1.0000" not in markdown
    text = results_json(results)
    data = json.loads(text)
    assert data["redteam"][0]["mcnemar_p"] is None
    assert data["redteam"][0]["undefined"]["mcnemar_p"] == "no item labelled on both sides"
    (tmp_path / "calibration.json").write_text(text, encoding="utf-8")
    assert results_json(load_calibration_json(tmp_path / "calibration.json")) == text


def test_a_none_without_a_reason_is_said_so_and_a_nan_is_undefined():
    from judge.calibration.stats import CorrelationResult

    hand_made = CorrelationResult(n=3, n_nan=0, pearson=float("nan"), pearson_p=0.5, spearman=0.1, spearman_p=None,
                                  kendall_tau_b=0.1, kendall_p=0.3, undefined={"spearman": "stale"})
    assert hand_made.pearson is None and hand_made.undefined == {"pearson": NOT_RECORDED, "spearman_p": NOT_RECORDED}


@pytest.mark.parametrize(("judge", "human"), [([1.0, 1.0, 1.0], [3, 2, 1]), ([2.0], [1.0])])
def test_tau_ap_b_is_undefined_on_an_all_tied_side_not_zero(judge, human):
    assert tau_ap_b(judge, human) is None


def test_a_pair_too_small_to_test_is_no_tie_in_the_agreement_table():
    runs = {"a": {"q1": 0.2, "q2": 0.3}, "b": {"q1": 0.7}, "c": {"q1": 0.1, "q2": 0.35}}
    result = pairwise_significance_agreement(runs, runs)
    # a-b and b-c share one request: no t-test could say anything, so they are no "tie" that agrees; a-c shares two
    assert (result.ttest.n_pairs, result.ttest.untested) == (1, 2)
    # Wilcoxon's exact test needs 6 requests to reach p < 0.05 (2 / 2^5 = 0.0625): no pair is tested
    assert (result.wilcoxon.n_pairs, result.wilcoxon.untested, result.wilcoxon.agreement) == (0, 3, None)
    assert result.wilcoxon.why("agreement") == "no pair of runs shares the 6 requests the test needs"


@pytest.mark.parametrize(("alpha", "least"), [(0.05, 6), (0.1, 5), (0.01, 8)])
def test_wilcoxon_needs_the_requests_whose_most_lopsided_outcome_is_significant(alpha, least):
    from scipy import stats as sps

    from judge.calibration.stats.significance import least_requests

    assert least_requests("wilcoxon", alpha) == least
    assert sps.wilcoxon([1.0] * least).pvalue < alpha <= sps.wilcoxon([1.0] * (least - 1)).pvalue


def test_mcnemar_on_no_item_has_no_p_value():
    result = mcnemar_exact([], [])
    assert result.p_value is None and result.why("p_value") == "no item compared"
    assert mcnemar_exact([True], [True]).p_value == 1.0  # items, none discordant: p is 1, a value
