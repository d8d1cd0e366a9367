"""The sample the tool draws (`argue-judge sample`, judge.sample) and the inverse-probability-weighted estimate
that reads it back (`score --human JUDGED --human SAMPLE`)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.formats.judgments import DecisionRecord, ReportJudgment, SentenceJudgment, write_judgments
from judge.metrics import score_judgments
from judge.metrics.corrected import correct_scores
from judge.metrics.ppi import ppi_mean
from judge.metrics.sampling import WeightedInclusion, active_probabilities, pareto_draw


def test_the_weighted_estimate_matches_a_hand_computation_on_a_tiny_population():
    # N = 5 units; the sample drew units 0, 2 and 3 with probabilities 0.5, 0.8 and 0.25 (lambda fixed at 1, no
    # prior): theta = mean_N(f) + sum_S w (y - f) / sum_S w, w = 1/pi
    judge = [0.5, 0.0, 1.0, 0.25, 0.75]
    human = [1.0, math.nan, 0.5, 0.0, math.nan]
    pi = [0.5, 0.3, 0.8, 0.25, 0.4]
    e = ppi_mean(judge, human, pi, lam=1.0, prior_weight=0)
    # rectifiers 0.5, -0.5, -0.25 with weights 2, 1.25, 4 (sum 7.25): e_bar = (1 - 0.625 - 1) / 7.25
    e_bar = -0.625 / 7.25
    assert e.ppi.value == pytest.approx(0.5 + e_bar)
    # Var = n/(n-1) sum (1 - pi) w^2 (e - e_bar)^2 / (sum w)^2
    terms = 0.5 * 4 * (0.5 - e_bar) ** 2 + 0.2 * 1.5625 * (-0.5 - e_bar) ** 2 + 0.75 * 16 * (-0.25 - e_bar) ** 2
    assert e.ppi.se ** 2 == pytest.approx(1.5 * terms / 7.25 ** 2)


def record(run: str, request: str, precision: list[int], confidence: float | None) -> ReportJudgment:
    decisions = [] if confidence is None else [DecisionRecord(decision="supports_citation", verdict=True,
                                                              confidence=confidence)]
    return ReportJudgment(run_id=run, request_id=request, sentences=[
        SentenceJudgment(index=i, text=f"s{i}", citations=["d"], outcome=o, decisions=decisions)
        for i, o in enumerate(precision)])


def test_a_weighted_sample_file_weights_the_run_estimate_by_its_probabilities():
    # one run of 4 reports, precision 1, 0, 1, 0.5 by the judge; humans judged reports q0 (pi 0.5) and q1 (pi 0.25)
    judge = [record("r", "q0", [3], 0.9), record("r", "q1", [1], 0.6), record("r", "q2", [3], 0.9),
             record("r", "q3", [3, 1], 0.7)]
    human = [record("r", "q0", [1], None), record("r", "q1", [1], None)]
    inclusion = WeightedInclusion({("r", "q0"): 0.5, ("r", "q1"): 0.25}, {j.key for j in judge},
                                  {j.key for j in human}, "sample.jsonl")
    corrected = correct_scores(score_judgments(judge), score_judgments(human), inclusion)
    (run,) = corrected.of_measure("SentencePrecision")
    # judge mean 2.5/4; rectifiers (lambda as fitted) weighted 2 and 4
    estimate = run.estimate
    lam = estimate.lam
    e_bar = (2 * (0 - lam * 1) + 4 * (0 - lam * 0)) / 6
    assert estimate.ppi.value == pytest.approx(lam * 2.5 / 4 + e_bar)
    assert corrected.design.startswith("weighted")


def test_active_probabilities_follow_the_doubt_sum_to_the_budget_and_keep_the_floor():
    u = np.array([0.1, 0.2, 0.4, 0.8, 0.0, 0.05])
    pi = active_probabilities(u, 2.0, 0.05)
    assert pi.sum() == pytest.approx(2.0)
    assert pi.min() >= 0.05 and pi.max() <= 1
    free = (pi > 0.05) & (pi < 1)
    assert np.allclose(pi[free] / u[free], (pi[free] / u[free])[0])    # proportional where not clipped
    assert np.allclose(active_probabilities(np.ones(6), 3.0, 0.1), 0.5)  # equal doubt: a uniform sample
    with pytest.raises(ValueError, match="minimum probability of 0.5 over 6 units needs a budget of at least 3"):
        active_probabilities(u, 2.0, 0.5)


def test_the_pareto_draw_has_the_inclusion_probabilities_it_was_given():
    pi = active_probabilities(np.array([0.05, 0.1, 0.2, 0.3, 0.5, 0.9, 0.2, 0.1]), 3.0, 0.05)
    rng = np.random.default_rng(7)
    counts = np.zeros(len(pi))
    for _ in range(4000):
        drawn = pareto_draw(pi, 3, rng)
        assert len(drawn) == 3
        counts[drawn] += 1
    assert np.allclose(counts / 4000, pi, atol=0.04)


def _cli(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    records = [record(run, f"q{i}", [3 if rng.random() < 0.6 else 1 for _ in range(3)], float(rng.uniform(0.5, 1)))
               for run in ("a", "b") for i in range(30)]
    path = tmp_path / "judgments.jsonl"
    write_judgments(path, records)
    return path


def test_sample_then_score_reads_the_weights_back(collection, tmp_path):
    out = _cli("sample", str(collection), "--budget", "20", "--seed", "4", "--out", str(tmp_path / "s.jsonl"))
    assert "drew 20 of 60 reports (active, round 1" in out
    lines = (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()
    header, rows = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    assert header["kind"] == "active" and len(rows) == 20 and all(0 < r["probability"] <= 1 for r in rows)
    assert len({r["probability"] for r in rows}) > 1          # the judge's doubt set different probabilities
    drawn = {(r["run_id"], r["request_id"]) for r in rows}
    judged = [json.loads(line) for line in collection.read_text(encoding="utf-8").splitlines()]
    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps(j) + "\n" for j in judged if (j["run_id"], j["request_id"]) in drawn),
                     encoding="utf-8")
    _cli("score", str(collection), "--human", str(human), "--human", str(tmp_path / "s.jsonl"), "--out",
         str(tmp_path / "out"))
    tsv = (tmp_path / "out" / "ppi.tsv").read_text(encoding="utf-8")
    assert "# sample: weighted (active sample file: 20 reports" in tsv and "|ppi-sample:weighted@" in tsv
    # a second round: 10 more, the file holds both rounds with each report's probability over both
    out = _cli("sample", str(collection), "--budget", "10", "--previous", str(tmp_path / "s.jsonl"), "--out",
               str(tmp_path / "s2.jsonl"))
    assert "drew 10 of 60 reports (active, round 2" in out
    rows2 = [json.loads(line) for line in (tmp_path / "s2.jsonl").read_text(encoding="utf-8").splitlines()[1:]]
    assert len(rows2) == 30 and {(r["run_id"], r["request_id"]) for r in rows2} >= drawn
    first = {(r["run_id"], r["request_id"]): r["probability"] for r in rows}
    assert all(r["probability"] >= first.get((r["run_id"], r["request_id"]), 0) - 1e-9 for r in rows2)


def test_bad_samples_are_refused_in_one_line(collection, tmp_path):
    for budget, says in (("61", "--budget must be between 2 and the 60 reports left to draw, not 61"),
                         ("1", "'--budget': 1 is not a number in [2, 10000000]")):  # the option's declared range
        out = _cli("sample", str(collection), "--budget", budget, "--out", str(tmp_path / "x.jsonl"), code=2)
        assert says in out
        assert len(out.strip().splitlines()) == 1
    _cli("sample", str(collection), "--budget", "5", "--out", str(tmp_path / "s.jsonl"))
    lines = (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()
    judged = {json.loads(line)["run_id"] + "/" + json.loads(line)["request_id"]: line
              for line in collection.read_text(encoding="utf-8").splitlines()}
    rows = [json.loads(line) for line in lines[1:]]
    human = tmp_path / "human.jsonl"
    human.write_text("".join(judged[f"{r['run_id']}/{r['request_id']}"] + "\n" for r in rows), encoding="utf-8")
    cases = {
        "probability 1.5 is outside (0, 1]": [lines[0], *lines[1:-1],
                                              json.dumps({**rows[-1], "probability": 1.5})],
        "the sample lists 1 report(s) the judgments do not have (z/q0)": [
            *lines, json.dumps({"run_id": "z", "request_id": "q0", "probability": 0.5})],
        "1 human-judged report(s) are not in the sample": [lines[0], *lines[2:]],
    }
    for message, content in cases.items():
        bad = tmp_path / "bad.jsonl"
        bad.write_text("\n".join(content) + "\n", encoding="utf-8")
        out = _cli("score", str(collection), "--human", str(human), "--human", str(bad), "--out",
                   str(tmp_path / "out"), code=2)
        assert message in out and len(out.strip().splitlines()) == 1, out
    out = _cli("score", str(collection), "--human", str(human), "--human", str(tmp_path / "s.jsonl"), "--sample",
               "requests", "--out", str(tmp_path / "out"), code=2)
    assert "--sample requests cannot use its weights" in out and len(out.strip().splitlines()) == 1


def test_calibrate_refuses_a_sample_file_it_cannot_weight(collection, tmp_path):
    from judge.calibration.importers import read_paired_judgments
    from judge.errors import InputError

    _cli("sample", str(collection), "--budget", "5", "--out", str(tmp_path / "s.jsonl"))
    with pytest.raises(InputError, match="a sample file's weights cannot be used by calibrate's agreement"):
        read_paired_judgments([collection, tmp_path / "s.jsonl"], [collection])


def test_the_api_checks_its_arguments():
    import judge

    with pytest.raises(TypeError, match="budget must be a whole number of reports"):
        judge.sample([], 2.5)
    with pytest.raises(ValueError, match=r"min_probability must be in \(0, 1\]"):
        judge.sample([], 5, min_probability=0)
