"""Prediction-powered estimates (judge.metrics.ppi, sampling, corrected; `--human` on score and eval).

The estimator is checked against its formula on a tiny case computed by hand, and on the degenerate cases: a
perfect judge, a run without a labelled report, a human file that is not a subset of the judged reports."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from judge.errors import InputError
from judge.formats.judgments import ReportJudgment, SentenceJudgment
from judge.judging.signature import ScoreSignature
from judge.metrics import ppi as ppi_module
from judge.metrics import score_judgments
from judge.metrics.corrected import correct_scores
from judge.metrics.ppi import (
    FEW_LABELS,
    NO_DISAGREEMENT,
    NO_INTERVAL,
    NOT_ESTIMABLE,
    ppi_difference,
    ppi_mean,
    tuned_lambda,
    unseen_error_rate,
    variance_ratio,
)
from judge.metrics.sampling import Inclusion, check_subset

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


# -- the estimator, by formula -------------------------------------------------------------------------------

def test_tiny_case_matches_the_hand_computed_mean_and_variance():
    # N = 4 reports, the judge's values of all; humans judged the first three (a simple random sample, pi = 3/4).
    judge = [1.0, 0.0, 1.0, 1.0]
    human = [1.0, 1.0, 0.0, math.nan]
    e = ppi_mean(judge, human, lam=1.0, prior_weight=0)   # original PPI, lambda fixed, no prior
    # theta = mean_N(f) + mean_n(y - f) = 3/4 + (0 + 1 - 1)/3 = 0.75
    assert e.ppi.value == pytest.approx(0.75)
    # Var = (1 - n/N) s_e^2 / n; e = (0, 1, -1), s_e^2 = 2/2 = 1 -> (1/4)(1)/3 = 1/12
    assert e.ppi.se ** 2 == pytest.approx(1 / 12)
    half = stats.t.ppf(0.975, df=2) * math.sqrt(1 / 12)
    assert e.ppi.high - e.ppi.value == pytest.approx(half) or e.ppi.high == pytest.approx(0.75)
    # the t interval 0.75 -/+ half reaches past what the units can hold; it is clipped to
    # (labelled sum + [0, 1] for the one unlabelled unit) / N = [0.5, 0.75]
    assert (e.ppi.low, e.ppi.high) == pytest.approx((0.5, 0.75))
    # human only: mean 2/3, s_y^2 = 1/3 -> Var = (1/4)(1/3)/3 = 1/36 (a binary sample, the same interval)
    assert e.human_only.value == pytest.approx(2 / 3)
    assert e.human_only.se ** 2 == pytest.approx(1 / 36)
    assert e.judge_only == pytest.approx(0.75)
    assert e.effective_labels == pytest.approx(3 * (1 / 36) / (1 / 12))
    assert (e.units, e.labelled) == (4, 3) and e.status.startswith(FEW_LABELS)


def test_the_prior_pseudo_observations_enter_mean_and_variance_as_written():
    # the tiny case again with a = 0.75 at each corner (y, f) of [0, 1]^2; lambda = 1: corners' rectifiers
    # 0, -1, 1, 0 (sum 0, so the centre stays the sample's mean rectifier, 0)
    e = ppi_mean([1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 0.0, math.nan], lam=1.0, prior_weight=0.75, fade=math.inf)
    assert e.ppi.value == pytest.approx(0.75)
    # S^2 = (sum e^2 + a sum c^2) / (n + 4a - 1) = (2 + 1.5) / 5; Var = (1 - 3/4) S^2 / (n + 4a) = 0.25 * 0.7 / 6
    assert e.ppi.se ** 2 == pytest.approx(0.25 * 0.7 / 6)
    # clipped to what the unlabelled unit can add: (1 + 1 + 0 + [0, 1]) / 4
    assert (e.ppi.low, e.ppi.high) == pytest.approx((0.5, 0.75))
    # human only (lambda 0): corners' values 0, 0, 1, 1, so the interval's centre is (2 + 1.5) / (3 + 3), as
    # Agresti-Coull's; the point estimate stays the sample mean
    assert e.human_only.value == pytest.approx(2 / 3)
    se = math.sqrt(0.25 * (1 / 3 * ((1 - 3.5 / 6) ** 2 * 2 + (3.5 / 6) ** 2) * 3 / 0.25 * 0.25
                           + 0.75 * 2 * ((3.5 / 6) ** 2 + (1 - 3.5 / 6) ** 2)) / 5 / 6)
    assert e.human_only.se == pytest.approx(se)


def test_unequal_inclusion_uses_the_weighted_formula():
    # Two strata sampled at different rates: the rectifier is the 1/pi-weighted mean (Hajek) and the variance
    # n/(n-1) * sum (1 - pi) w^2 (e - e_bar)^2 / (sum w)^2.
    judge = np.array([0.2, 0.4, 0.6, 0.8, 0.5, 0.1])
    human = np.array([0.3, np.nan, 0.5, np.nan, 0.7, 0.0])
    pi = np.array([0.5, 0.5, 0.5, 0.5, 1.0, 1.0])
    e = ppi_mean(judge, human, pi, lam=0.5, prior_weight=0)
    s = ~np.isnan(human)
    w = 1 / pi[s]
    resid = human[s] - 0.5 * judge[s]
    e_bar = np.sum(w * resid) / w.sum()
    assert e.ppi.value == pytest.approx(0.5 * judge.mean() + e_bar)
    variance = 4 / 3 * np.sum((1 - pi[s]) * w ** 2 * (resid - e_bar) ** 2) / w.sum() ** 2
    assert e.ppi.se == pytest.approx(math.sqrt(variance))


def test_tuned_lambda_is_the_regression_slope_clipped_to_the_unit_interval():
    rng = np.random.default_rng(1)
    f = rng.random(40)
    y = 0.6 * f + 0.1 * rng.random(40)
    assert tuned_lambda(y, f, np.ones(40)) == pytest.approx(np.polyfit(f, y, 1)[0])
    assert tuned_lambda(3 * f, f, np.ones(40)) == 1.0      # slope 3: clipped
    assert tuned_lambda(-f, f, np.ones(40)) == 0.0         # negative: clipped, PPI falls back to human only
    assert tuned_lambda(y, np.full(40, 0.5), np.ones(40)) == 0.0   # a constant judge tells nothing


def test_fitted_lambda_costs_a_degree_of_freedom():
    rng = np.random.default_rng(2)
    judge = rng.random(30)
    human = np.where(np.arange(30) < 10, 0.1 + 0.7 * judge + 0.1 * rng.standard_normal(30), np.nan)
    e = ppi_mean(judge, human, prior_weight=0)
    lam = tuned_lambda(human[:10], judge[:10], np.ones(10))
    resid = human[:10] - lam * judge[:10]
    se = math.sqrt((1 - 10 / 30) * resid.var(ddof=2) / 10)
    assert e.lam == pytest.approx(lam)
    assert e.ppi.se == pytest.approx(se)
    assert e.ppi.high - e.ppi.value == pytest.approx(stats.t.ppf(0.975, df=8) * se)


def test_a_judge_that_agrees_on_every_sampled_unit_still_gives_a_real_interval():
    # the judge matches the humans on all 12 labelled units but not everywhere: the old interval (no prior) was
    # the judge's number with width 0 and missed the truth; the prior keeps a width that covers it
    rng = np.random.default_rng(4)
    human = (rng.random(200) < 0.4).astype(float)
    judge = human.copy()
    judge[150:160] = 1 - judge[150:160]          # 5% of units wrong, none of them sampled
    sample = np.full(200, np.nan)
    sample[:12] = human[:12]
    collapsed = ppi_mean(judge, sample, prior_weight=0)
    assert collapsed.ppi.width == pytest.approx(0.0)
    e = ppi_mean(judge, sample)
    assert e.ppi.width > 0.1
    assert e.ppi.low <= human.mean() <= e.ppi.high
    assert e.status.startswith(NO_DISAGREEMENT)
    assert math.isfinite(e.effective_labels)


def _agreeing_sample(unlabelled_errors: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """N = 1,000 units, half of them positive; the judge matches the humans on the 20 labelled units and misses
    `unlabelled_errors` positives among the 980 unlabelled ones (all one way: the judge's mean is too low)."""
    human = np.zeros(1000)
    human[::2] = 1
    judge = human.copy()
    judge[np.arange(20, 1000, 2)[:unlabelled_errors]] = 0
    sample = np.full(1000, np.nan)
    sample[:20] = human[:20]
    return human, judge, sample


def test_a_judge_that_agrees_on_every_sampled_unit_covers_a_one_percent_error_on_the_unlabelled_units():
    human, judge, sample = _agreeing_sample(round(0.01 * 980))
    assert np.array_equal(judge[:20], human[:20]) and human.mean() - judge.mean() == pytest.approx(10 / 1000)
    e = ppi_mean(judge, sample)
    assert e.status.startswith(NO_DISAGREEMENT) and e.lam == 1.0
    assert e.ppi.value == pytest.approx(judge.mean())
    assert e.ppi.low <= human.mean() <= e.ppi.high
    # at least the largest disagreement rate 20 agreeing labels leave plausible, on the unlabelled share
    margin = 0.98 * (1 - 0.05 ** (1 / 20))
    assert e.ppi.high - e.ppi.value >= margin - 1e-12 and e.ppi.value - e.ppi.low >= margin - 1e-12


def test_the_interval_covers_any_error_rate_a_sample_without_disagreement_leaves_plausible(monkeypatch):
    # 13% of the unlabelled units wrong, all one way: 20 labels show none of it in 0.87^20 = 6% of samples.
    # The prior alone (without the unseen-error width) misses it; the interval covers it.
    human, judge, sample = _agreeing_sample(round(0.13 * 980))
    shift = human.mean() - judge.mean()
    assert unseen_error_rate(20, 0.95) == pytest.approx(1 - 0.05 ** (1 / 20))
    assert shift == pytest.approx(127 / 1000) and shift < 0.98 * unseen_error_rate(20, 0.95)
    e = ppi_mean(judge, sample)
    assert e.ppi.low <= human.mean() <= e.ppi.high
    monkeypatch.setattr(ppi_module, "_unseen_errors", lambda centre, low, high, se, *rest: (low, high, se))
    prior_alone = ppi_mean(judge, sample)
    assert prior_alone.ppi.high < human.mean()


def test_few_labels_are_flagged():
    e = ppi_mean([0.2, 0.9, 0.4, 0.7, 0.1, 0.5], [0.3, 0.8, 0.4, math.nan, math.nan, math.nan])
    assert e.status.startswith(FEW_LABELS) and not e.trusted and e.estimable
    assert e.ppi.width > 0


def test_no_labelled_unit_is_not_estimable_never_the_judges_number():
    e = ppi_mean([0.5, 0.7], [math.nan, math.nan])
    assert e.status == NOT_ESTIMABLE and not e.estimable
    assert math.isnan(e.ppi.value) and math.isnan(e.human_only.value)
    assert e.judge_only == pytest.approx(0.6)   # shown beside, but never as the estimate


def test_one_labelled_unit_has_a_point_estimate_but_no_interval():
    e = ppi_mean([0.5, 0.7, 0.2], [0.4, math.nan, math.nan])
    assert e.status == NO_INTERVAL
    assert e.ppi.value == pytest.approx(np.mean([0.5, 0.7, 0.2]) + (0.4 - 0.5))
    assert math.isnan(e.ppi.low)


def test_every_unit_labelled_gives_the_human_mean_exactly():
    e = ppi_mean([0.5, 0.7, 0.2], [0.4, 0.6, 0.9])
    assert e.ppi.value == pytest.approx(np.mean([0.4, 0.6, 0.9]))
    assert e.ppi.width == 0 and e.human_only.width == 0


def test_variance_ratio_is_one_minus_the_squared_correlation():
    y = np.array([1, 1, 1, 0, 0, 0, 1, 0] * 10)
    f = np.array([1, 1, 0, 0, 0, 1, 1, 0] * 10)
    lam, kept = variance_ratio(y, f)
    rho = np.corrcoef(y, f)[0, 1]
    assert lam == pytest.approx(rho)   # equal variances: the slope is the correlation
    assert kept == pytest.approx(1 - rho ** 2)


# -- sampling designs ----------------------------------------------------------------------------------------

JUDGED = {(run, request) for run in ("a", "b", "c") for request in ("q1", "q2")}


def test_a_human_file_outside_the_judged_reports_is_refused_naming_the_file():
    with pytest.raises(InputError) as info:
        check_subset(JUDGED, {("a", "q1"), ("z", "q9")}, "human.jsonl")
    assert str(info.value).startswith("human.jsonl: 1 human-judged report(s) are not among the judged reports (z/q9)")


def test_report_design_is_stratified_by_request_when_every_request_was_sampled():
    inclusion = Inclusion("reports", JUDGED, {("a", "q1"), ("b", "q1"), ("c", "q2")})
    assert inclusion.stratified_reports
    assert inclusion.of_report("q1") == pytest.approx(2 / 3)
    assert inclusion.of_report("q2") == pytest.approx(1 / 3)


def test_request_design_refuses_a_partly_judged_request():
    inclusion = Inclusion("requests", JUDGED, {("a", "q1"), ("b", "q1"), ("c", "q1")})
    assert inclusion.of_report("q1") == inclusion.of_report("q2") == 0.5
    with pytest.raises(InputError, match="request q1 has 2 of its 3 reports judged.*use --sample reports"):
        Inclusion("requests", JUDGED, {("a", "q1"), ("b", "q1")}, "h.jsonl")


# -- runs, pairs and ranking ---------------------------------------------------------------------------------

def record(run: str, request: str, outcomes: list[int]) -> ReportJudgment:
    """A report whose sentence precision is the share of outcome 3 among outcomes 1 and 3."""
    return ReportJudgment(run_id=run, request_id=request, sentences=[
        SentenceJudgment(index=i, text=f"s{i}", citations=["d"], outcome=o) for i, o in enumerate(outcomes)])


def test_runs_pairs_and_a_ranking_with_ties():
    requests = [f"q{i}" for i in range(8)]
    precision = {"good": [3, 3, 3, 1], "close": [3, 3, 1, 3], "bad": [1, 1, 1, 3]}
    judge = [record(run, q, p) for run, p in precision.items() for q in requests]
    # humans judged six of the eight requests of each run, and nothing of run "lost"; the judge is perfect
    judge += [record("lost", q, [3, 1]) for q in requests]
    human = [record(run, q, p) for run, p in precision.items() for q in requests[:6]]
    inclusion = Inclusion("reports", {j.key for j in judge}, {j.key for j in human})
    corrected = correct_scores(score_judgments(judge), score_judgments(human), inclusion)
    by_run = {r.run_id: r for r in corrected.of_measure("SentencePrecision")}
    assert by_run["good"].estimate.ppi.value == pytest.approx(0.75)
    assert by_run["lost"].estimate.status == NOT_ESTIMABLE and by_run["lost"].rank is None
    assert any("not estimable for run(s) lost" in note for note in corrected.notes)
    # six labels per run: below what the coverage grid checked, said once for all measures
    warning = [note for note in corrected.notes if note.startswith("interval not to be trusted for ")]
    assert len(warning) == 1 and "good (few labels: 6 < 10" in warning[0] and "SentencePrecision" in warning[0]
    # every difference is known exactly: good and close (equal) tie, bad is told apart from both
    apart = {(p.run_a, p.run_b) for p in corrected.distinguishable("SentencePrecision")}
    assert ("bad", "good") in apart and ("bad", "close") in apart
    assert by_run["good"].rank == by_run["close"].rank == 1 and by_run["bad"].rank == 3


# -- the signature -------------------------------------------------------------------------------------------

def test_score_signature_records_the_human_sample_and_confidence():
    plain = ScoreSignature("judge-x", requests=2, reports=6, failed=0, undetermined=0)
    assert "human" not in plain.short()
    with_human = ScoreSignature("judge-x", requests=2, reports=6, failed=0, undetermined=0, human="6@0123abcd",
                                sample="reports", confidence=0.9)
    assert with_human.short().endswith("|ppi-human:6@0123abcd|ppi-sample:reports|ppi-conf:0.9")
    assert ScoreSignature(**json.loads(with_human.as_json())) == with_human


# -- end to end on the bundled example -----------------------------------------------------------------------

def _converter():
    spec = importlib.util.spec_from_file_location("expected_to_human", EXAMPLES / "expected_to_human.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)   # type: ignore[union-attr]
    return module


def _eval_args(api_base: str, root: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
            "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"),
            "--model", "openai/fake", "--api-base", api_base, "--api-key", "x",
            "--cache-dir", str(root / "cache"), "--out", str(out), *extra]


@pytest.fixture(scope="module")
def judged_example(tmp_path_factory):
    """The bundled example judged by the scripted fake judge (judge.testing's smart responder), and the designed
    outcomes of expected_outcomes.json as human judgments of all six reports."""
    from judge.testing import FakeEndpoint, smart_responder

    root = tmp_path_factory.mktemp("ppi-example")
    endpoint = FakeEndpoint(smart_responder)
    try:
        _cli(*_eval_args(endpoint.api_base, root, root / "out"))
    finally:
        endpoint.stop()
    judgments = root / "out" / "judgments.jsonl"
    from judge.formats.judgments import write_judgments

    convert = _converter().convert
    write_judgments(root / "human-all.jsonl", convert(judgments))
    write_judgments(root / "human-ex101.jsonl", convert(judgments, {f"{r}/ex-101" for r in
                                                                      ("run-cited", "run-miscited", "run-padded")}))
    return root, judgments


def _cli(*args: str, code: int = 0) -> str:
    from typer.testing import CliRunner

    from judge.cli.app import app

    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result.output


def _tsv(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"), strict=True)) for line in lines[1:]]


@pytest.mark.parametrize("width", [80, 160])
def test_the_printed_estimates_fit_the_terminal(judged_example, tmp_path, monkeypatch, width):
    """An 80-column terminal gets the columns that rank the runs, whole; a wide one every column."""
    from judge.cli import render

    monkeypatch.setattr(render.console, "_width", width)
    root, judgments = judged_example
    output = _cli("score", str(judgments), "--human", str(root / "human-all.jsonl"), "--out", str(tmp_path))
    table = output[output.index("Prediction-powered estimates"):output.index("F1: ")]
    assert max(len(line) for line in table.splitlines()) <= width
    assert "…" not in table                                    # no number cut to "0…"
    assert ("labels worth" in table) == (width >= 120) and ("in ppi.tsv" in output) == (width < 120)
    assert "| wF1 " in table.replace("│", "|") or width >= 120


def test_score_with_every_report_human_judged_gives_the_human_scores(judged_example, tmp_path):
    root, judgments = judged_example
    output = _cli("score", str(judgments), "--human", str(root / "human-all.jsonl"), "--out", str(tmp_path))
    assert "Prediction-powered estimates (95% intervals" in output
    human = _cli("score", str(root / "human-all.jsonl"), "--out", str(tmp_path / "human"))
    assert "ARGUE leaderboard" in human
    truth = {(r["run_id"]): r for r in _tsv(tmp_path / "human" / "leaderboard.tsv")}
    rows = _tsv(tmp_path / "ppi.tsv")
    assert {r["measure"] for r in rows} >= {"F1", "SentencePrecision", "NuggetRecall", "NuggetRecall(weighted=True)"}
    for row in rows:
        if row["measure"] == "F1":
            assert (row["labelled"], row["reports"], row["status"]) == ("2", "2", "ok")
            assert float(row["ppi"]) == pytest.approx(float(truth[row["run_id"]]["F1"]), abs=1e-4)
            assert float(row["ppi_low"]) == float(row["ppi_high"]) == pytest.approx(float(row["ppi"]))
    header = (tmp_path / "ppi.tsv").read_text(encoding="utf-8").splitlines()[0]
    assert "|ppi-human:6@" in header and "|ppi-sample:reports|ppi-conf:0.95" in header
    data = json.loads((tmp_path / "ppi.json").read_text(encoding="utf-8"))
    assert data["signature"] == header[2:] and {p["measure"] for p in data["pairs"]} >= {"F1"}
    assert (tmp_path / "ppi-pairs.tsv").is_file()


def test_a_whole_request_sample_gives_estimates_without_intervals(judged_example, tmp_path):
    root, judgments = judged_example
    _cli("score", str(judgments), "--human", str(root / "human-ex101.jsonl"), "--sample", "requests",
         "--confidence", "0.9", "--out", str(tmp_path))
    rows = [r for r in _tsv(tmp_path / "ppi.tsv") if r["measure"] == "F1"]
    assert {r["status"] for r in rows} == {NO_INTERVAL}
    assert {r["labelled"] for r in rows} == {"1"}
    assert "|ppi-sample:requests|ppi-conf:0.9" in (tmp_path / "ppi.tsv").read_text(encoding="utf-8").splitlines()[0]


def test_a_human_file_that_is_not_a_subset_is_refused_in_one_line(judged_example, tmp_path):
    root, judgments = judged_example
    foreign = tmp_path / "foreign.jsonl"
    lines = (root / "human-all.jsonl").read_text(encoding="utf-8").splitlines()
    foreign.write_text("\n".join([lines[0].replace('"run-cited"', '"run-unknown"'), *lines[1:]]) + "\n",
                       encoding="utf-8")
    output = _cli("score", str(judgments), "--human", str(foreign), "--out", str(tmp_path / "out"), code=2)
    assert f"{foreign}: 1 human-judged report(s) are not among the judged reports (run-unknown/" in output
    assert not (tmp_path / "out" / "ppi.tsv").exists()
    output = _cli("score", str(judgments), "--human", str(root / "human-ex101.jsonl"), "--sample", "bogus",
                  "--out", str(tmp_path / "out"), code=2)
    assert "choose one of reports, requests" in output


def test_eval_refuses_an_unfit_human_file_before_any_model_call_and_shows_intervals_in_the_view(judged_example,
                                                                                              tmp_path):
    from judge.testing import FakeEndpoint, smart_responder

    root, _ = judged_example
    endpoint = FakeEndpoint(smart_responder)
    try:
        output = _cli(*_eval_args(endpoint.api_base, tmp_path, tmp_path / "refused", "--human",
                                  str(root / "human-ex101.jsonl"), "--sample", "reports", "--human",
                                  str(root / "human-all.jsonl")), code=2)
        assert "human-all.jsonl:1: two human judgments of run run-cited request ex-101" in output
        output = _cli(*_eval_args(endpoint.api_base, tmp_path, tmp_path / "partial", "--human",
                                  str(EXAMPLES / "reports" / "run-cited.jsonl")), code=2)
        assert "run-cited.jsonl" in output
        assert endpoint.calls == 0
        output = _cli(*_eval_args(endpoint.api_base, root, tmp_path / "out", "--human",
                                  str(root / "human-ex101.jsonl"), "--view"))
    finally:
        endpoint.stop()
    assert "Prediction-powered estimates" in output and "ppi signature:" in output
    index = (tmp_path / "out" / "view" / "index.html").read_text(encoding="utf-8")
    assert "Corrected by the human sample" in index and "|ppi-human:3@" in index
    assert (tmp_path / "out" / "ppi.tsv").is_file()


def test_calibrate_section_reads_the_savings_off_the_confusion_matrix():
    from judge.calibration.report_ppi import savings_row
    from judge.calibration.stats import AgreementResult

    # phi = (40*40 - 10*10) / 50^2 = 0.6: lambda 0.6, variance kept 1 - 0.36, one label worth 1/0.64
    result = AgreementResult(labels=["supported", "not_supported"], n_total=100, n=100, failed=0, failed_ids=[],
                             accuracy=0.8, balanced_accuracy=0.8, kappa=0.6, kappa_ci_low=None, kappa_ci_high=None,
                             ci_level=0.95, n_boot=0, seed=None, boot_undefined=0, per_class=[],
                             confusion=[[40, 10], [10, 40]])
    assert savings_row("sc", result) == ["sc", 100, "0.600", "0.600", "0.60", "0.640", "1.56", "64"]


def test_a_pair_uses_every_label_not_only_the_requests_labelled_for_both():
    # 3 runs x 60 requests, 70 of the 180 reports labelled at random: two runs 0.36 apart
    # share only ~9 labelled requests, but each has ~23 labels of its own; compared from all of them they are
    # told apart
    rng = np.random.default_rng(35)
    difficulty = rng.normal(0, 0.1, 60)
    human = np.clip(np.array([0.21, 0.39, 0.57])[:, None] + difficulty + rng.normal(0, 0.25, (3, 60)), 0, 1)
    judge = np.where(rng.random((3, 60)) < 0.7, human, np.clip(human + rng.normal(0, 0.3, (3, 60)), 0, 1))
    mask = np.zeros(180, dtype=bool)
    mask[rng.choice(180, 70, replace=False)] = True
    sample = np.where(mask.reshape(3, 60), human, np.nan)
    every = np.arange(60)
    both = int((mask.reshape(3, 60)[0] & mask.reshape(3, 60)[2]).sum())
    assert both < 15
    pair = ppi_difference(judge[0], sample[0], judge[2], sample[2], every, every, confidence=0.95)
    assert pair.labelled == int(mask.reshape(3, 60)[[0, 2]].sum())
    assert pair.ppi.high < 0 and pair.ppi.excludes_zero()
    assert pair.ppi.low <= human[0].mean() - human[2].mean() <= pair.ppi.high
    # whole requests labelled: every run on the same requests, the paired variance
    paired = np.where(np.isin(every, rng.choice(60, 20, replace=False)), human, np.nan)
    pair = ppi_difference(judge[0], paired[0], judge[2], paired[2], every, every, confidence=0.95)
    a = ppi_mean(judge[0], paired[0])
    c = ppi_mean(judge[2], paired[2])
    assert pair.ppi.se < math.hypot(a.ppi.se, c.ppi.se)     # positively correlated rectifiers: paired is tighter


def test_events_count_disagreements_with_lambda_one_and_the_rarer_label_with_lambda_zero():
    from judge.metrics.ppi import _corners, events

    y = np.array([[1, 0, 1, 1, 0, 0, 1, 0.0]])
    f = np.array([1, 1, 1, 0, 0, 0, 1, 0.0])
    mask = np.ones_like(y, dtype=bool)
    assert events(y - f, mask, _corners(np.array([1.0])))[0] == pytest.approx(2)      # two disagreements
    rare = np.array([[0, 0, 0, 1, 0, 0, 0, 0.0]])
    assert events(rare, mask, _corners(np.array([0.0])))[0] == pytest.approx(1)       # one positive label


def test_the_prior_fades_as_the_sample_shows_disagreements_of_its_own():
    # 100 labelled units of 1,000, the judge wrong on 10 of them (mixed ways): lambda = 1, 10 events, so the
    # prior's weight is 0.75 * 10 / (10 + 10): the interval is the fixed-weight one at that weight, narrower than
    # at 0.75 (the corners' variance is above this good judge's)
    rng = np.random.default_rng(8)
    human = (rng.random(1000) < 0.5).astype(float)
    judge = human.copy()
    wrong = np.arange(0, 100, 10)
    judge[wrong] = 1 - judge[wrong]
    sample = np.where(np.arange(1000) < 100, human, np.nan)
    faded = ppi_mean(judge, sample, lam=1.0)
    assert faded.ppi.se == pytest.approx(ppi_mean(judge, sample, lam=1.0, prior_weight=0.75 * 10 / 20,
                                                  fade=math.inf).ppi.se)
    fixed = ppi_mean(judge, sample, lam=1.0, fade=math.inf)
    plain = ppi_mean(judge, sample, lam=1.0, prior_weight=0)
    assert plain.ppi.width < faded.ppi.width < fixed.ppi.width
