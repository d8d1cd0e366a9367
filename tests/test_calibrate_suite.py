"""`argue-judge calibrate` end to end on the fake endpoint: item data sets, prompt A/B, judgments files."""

from __future__ import annotations

import json
import math
import shutil

import pytest
from scipy import stats as sps
from typer.testing import CliRunner

from judge.calibration.runner import compare_judgments
from judge.cli.app import app
from judge.formats.judgments import DecisionRecord, ReportJudgment, SentenceJudgment
from judge.judging.prompts import default_prompts_dir
from judge.labels import Outcome
from judge.run.score import score
from judge.testing import FakeEndpoint, smart_responder

runner = CliRunner()

CLAIMS = [  # (claim, reference, human label): the smart responder supports claims whose words the text contains
    ("The bridge opened in 1932.", "The bridge opened to traffic in 1932 after four years of work.", "attributable"),
    ("The bridge is painted red.", "The bridge opened to traffic in 1932 after four years of work.",
     "not attributable"),
    ("The lake freezes every winter.", "Every winter the lake freezes over completely.", "attributable"),
    ("The lake is 40 metres deep.", "Every winter the lake freezes over completely.", "not attributable"),
    ("The museum has 300 paintings.", "The museum owns 300 paintings and 40 sculptures.", "attributable"),
    ("The museum opened in 1890.", "The museum owns 300 paintings and 40 sculptures.", "attributable"),
]


def write_attributionbench(path):
    lines = [json.dumps({"id": f"item-{i}", "claim": claim, "references": [ref], "attribution_label": label,
                         "src_dataset": "toy" if i % 2 else "other"})
             for i, (claim, ref, label) in enumerate(CLAIMS)]
    path.write_text("\n".join(lines) + "\n")


def calibrate_args(endpoint, tmp_path, *extra):
    return ["calibrate", "--model", "openai/fake", "--api-base", endpoint.api_base, "--api-key", "x",
            "--cache-dir", str(tmp_path / "cache"), "--n-boot", "200", "--no-plots", *extra]


def test_calibrate_items_writes_a_report_with_agreement(tmp_path):
    data = tmp_path / "ab.jsonl"
    write_attributionbench(data)
    with FakeEndpoint(smart_responder) as endpoint:
        result = runner.invoke(app, calibrate_args(endpoint, tmp_path, "--attributionbench", str(data),
                                                   "--nuggets", "examples/nuggets", "--docs", "examples/docs.jsonl",
                                                   "--out", str(tmp_path / "report")))
        assert result.exit_code == 0, result.output
        calls = endpoint.calls
        again = runner.invoke(app, calibrate_args(endpoint, tmp_path, "--attributionbench", str(data),
                                                  "--nuggets", "examples/nuggets", "--docs", "examples/docs.jsonl",
                                                  "--out", str(tmp_path / "report2")))
        assert again.exit_code == 0 and endpoint.calls == calls  # resumed entirely from the cache
    report = json.loads((tmp_path / "report" / "calibration.json").read_text())
    support = report["decisions"]["supports_citation"]
    assert support["n"] == len(CLAIMS) and support["failed"] == 0
    # the responder gets every item right but the last (a claim its reference does not state)
    assert support["accuracy"] == pytest.approx(5 / 6, abs=1e-6)
    # by hand, rows human / columns judge (supported, not_supported): [[3, 1], [0, 2]]
    assert support["confusion"] == [[3, 1], [0, 2]]
    assert support["balanced_accuracy"] == pytest.approx((3 / 4 + 2 / 2) / 2, abs=1e-6)
    # kappa = (p_o - p_e) / (1 - p_e), p_o = 5/6, p_e = (4*3 + 2*3) / 36 = 1/2
    assert support["kappa"] == pytest.approx(2 / 3, abs=1e-6)
    assert set(support["by_group"]) == {"toy", "other"}
    toy, other = support["by_group"]["toy"], support["by_group"]["other"]
    assert (toy["n"], toy["accuracy"], toy["kappa"]) == (3, pytest.approx(2 / 3, abs=1e-6), 0.0)  # p_o = p_e
    assert (other["n"], other["accuracy"], other["kappa"]) == (3, 1.0, None)  # one class only: undefined
    assert report["decisions"]["answers_nugget"]["n"] > 0
    markdown = (tmp_path / "report" / "calibration.md").read_text()
    assert "| supports_citation | 6 | 0 | 0.833 | 0.875 | 0.667 |" in markdown
    assert f"Signature: `{report['signature']}`" in markdown
    rerun = (tmp_path / "report2" / "calibration.md").read_bytes()
    assert (tmp_path / "report" / "calibration.md").read_bytes() == rerun


def test_prompt_ab_asks_only_the_edited_prompt_and_reports_flips(tmp_path):
    data = tmp_path / "ab.jsonl"
    write_attributionbench(data)
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(default_prompts_dir(), old)
    shutil.copytree(default_prompts_dir(), new)
    (new / "supports_citation.md").write_text((new / "supports_citation.md").read_text() + "\nBe lenient.\n")

    def lenient(request):  # the new prompt makes the judge call everything supported
        answer = smart_responder(request)
        if "Be lenient." in json.dumps(request["messages"]):
            answer = {"rationale": "lenient", "evidence": [1], "verdict": "supported"}  # passage [1] is shown
        return answer

    with FakeEndpoint(lenient) as endpoint:
        first = runner.invoke(app, calibrate_args(endpoint, tmp_path, "--attributionbench", str(data), "--prompts",
                                                  str(old), "--out", str(tmp_path / "r1")))
        assert first.exit_code == 0, first.output
        calls = endpoint.calls
        result = runner.invoke(app, calibrate_args(endpoint, tmp_path, "--attributionbench", str(data), "--prompts",
                                                   str(new), "--against", str(old), "--out", str(tmp_path / "r2")))
        assert result.exit_code == 0, result.output
        assert endpoint.calls - calls == len(CLAIMS)  # the old prompt's answers came from the cache
    report = json.loads((tmp_path / "r2" / "calibration.json").read_text())
    [comparison] = report["prompt_ab"]
    flipped_to_wrong = comparison["right_to_wrong"]
    assert sorted(flipped_to_wrong) == ["item-1", "item-3"]  # two unsupported claims now called supported
    assert "the comparison cannot show a difference" in (tmp_path / "r2" / "calibration.md").read_text()


def _judgments(run_id, outcomes, support_verdicts):
    sentences = [
        SentenceJudgment(index=i, text=f"s{i}", citations=["d1"], outcome=Outcome(o),
                         decisions=[DecisionRecord(decision="supports_citation", verdict=v, doc_ids=["d1"])])
        for i, (o, v) in enumerate(zip(outcomes, support_verdicts, strict=True))]
    return ReportJudgment(run_id=run_id, request_id="q1", sentences=sentences, nuggets=[], assessor="human")


def test_human_and_judge_judgments_are_compared_decision_outcome_report_and_run():
    human = [_judgments("a", [3, 3, 1], [True, True, False]), _judgments("b", [1, 1, 3], [False, False, True]),
             _judgments("c", [3, 1, 1], [True, False, False])]
    judged = [_judgments("a", [3, 2, 1], [True, True, False]), _judgments("b", [1, 1, 1], [False, False, False]),
              _judgments("c", [3, 1, 1], [True, False, False])]
    comparison = compare_judgments(human, judged, lambda js: score(js, "test")[0].rows(), n_boot=100,
                                   repetitions=50)
    support = comparison.decisions["supports_citation"]
    assert (support.n, support.accuracy) == (9, 8 / 9)
    # humans support 4 of 9 citations, the judge 3 (it misses b's last): p_o = 8/9, p_e = (4*3 + 5*6) / 81
    assert support.kappa == pytest.approx(10 / 13)
    outcome = comparison.decisions["sentence_outcome"]
    assert outcome.accuracy == 7 / 9
    # outcomes: humans 3 x4, 1 x5; judge 3 x2, 2 x1, 1 x6: p_e = (4*2 + 5*6) / 81 = 38/81
    assert outcome.kappa == pytest.approx(25 / 43)

    # SentencePrecision = #3 / (#1 + #3) here (#2 is neutral): humans a 2/3, b 1/3, c 1/3; judge a 1/2, b 0, c 1/3
    judge_p, human_p = [1 / 2, 0.0, 1 / 3], [2 / 3, 1 / 3, 1 / 3]
    precision = comparison.report_level["SentencePrecision"]
    assert precision.n == 3
    assert precision.kendall_tau_b == pytest.approx(2 / math.sqrt(6))  # 2 concordant pairs, 1 tied on the human side
    assert precision.kendall_tau_b == pytest.approx(sps.kendalltau(judge_p, human_p).statistic)
    assert precision.spearman == pytest.approx(sps.spearmanr(judge_p, human_p).statistic)
    assert precision.pearson == pytest.approx(sps.pearsonr(judge_p, human_p).statistic)

    board = comparison.run_level["SentencePrecision"]
    assert board.n_runs == 3
    # one request per run: SE 0, so only the exactly equal humans b and c are tied
    assert (board.judge_tied_pairs, board.human_tied_pairs) == (0, 1)
    assert board.human_tie_groups == [["a"], ["b", "c"]] and board.judge_tie_groups == [["a"], ["c"], ["b"]]
    assert board.kendall_tau_b_raw == pytest.approx(2 / math.sqrt(6))
    # each repetition orders b, c at random: tau = 1 (a, c, b like the judge) or 1/3 (a, b, c); so the mean is
    # 1/3 + 2/3 * k/50 for the k repetitions that drew c first, and the std that of a two-point distribution
    k = (board.kendall_tau_mean - 1 / 3) / (2 / 3) * 50
    assert k == pytest.approx(round(k), abs=1e-9) and 0 < round(k) < 50
    q = round(k) / 50
    assert board.kendall_tau_std == pytest.approx(2 / 3 * math.sqrt(q * (1 - q)))
    # Spearman per repetition: 1 or 1 - 6*2/(3*8) = 1/2, with the same draws
    assert board.spearman_rho_mean == pytest.approx(1 / 2 + 1 / 2 * q)
    # the AutoJudge-style measures on the same means: tau-b as above, tau_AP,b by its definition
    agreement = board.agreement.coefficients
    assert agreement["kendall"].value == pytest.approx(2 / math.sqrt(6))
    # humans' reference (b = c tied below a): only a is above b and c, judge agrees: 1; judge's reference
    # (a > c > b): c has a above (humans agree: 1), b has a, c above (humans tie b, c: 1/2): 2 * 3/4 - 1
    assert agreement["tauap_b"].value == pytest.approx((1 + 0.5) / 2)

    pairwise = comparison.pairwise["SentencePrecision"]
    # one request per pair of runs: no test can find a difference, so no pair has a verdict to agree on (each
    # would be a "tie" on both sides, an agreement of 1.0 that measures nothing)
    assert pairwise.ttest.untested == pairwise.wilcoxon.untested == 3
    assert pairwise.ttest.n_pairs == pairwise.wilcoxon.n_pairs == 0
    assert pairwise.ttest.agreement is None and pairwise.wilcoxon.agreement is None
    assert pairwise.ttest.table == [[0, 0, 0], [0, 0, 0], [0, 0, 0]]


def test_items_jsonl_lists_every_item_and_exclude_leaves_them_out_before_sampling(tmp_path):
    data = tmp_path / "ab.jsonl"
    write_attributionbench(data)
    with FakeEndpoint(smart_responder) as endpoint:
        tuned = runner.invoke(app, calibrate_args(endpoint, tmp_path, "--attributionbench", str(data),
                                                  "--sample", "attributionbench=3", "--seed", "1",
                                                  "--out", str(tmp_path / "tuning")))
        assert tuned.exit_code == 0, tuned.output
        per_item = [json.loads(line) for line in (tmp_path / "tuning" / "items.jsonl").read_text().splitlines()]
        assert len(per_item) == 3
        # the responder is right on every item but item-5 (its reference does not state the claim)
        human = {f"item-{i}": label for i, (_, _, label) in enumerate(CLAIMS)}
        for row in per_item:
            assert row["decision"] == "supports_citation" and row["error"] is None
            assert row["human"] == ("supported" if human[row["item_id"]] == "attributable" else "not_supported")
            assert (row["judge"] == row["human"]) is (row["item_id"] != "item-5")
        held_out = runner.invoke(app, calibrate_args(endpoint, tmp_path, "--attributionbench", str(data),
                                                     "--exclude", str(tmp_path / "tuning" / "items.jsonl"),
                                                     "--out", str(tmp_path / "held-out")))
        assert held_out.exit_code == 0, held_out.output
    tuning_ids = {row["item_id"] for row in per_item}
    rest = [json.loads(line)["item_id"] for line in (tmp_path / "held-out" / "items.jsonl").read_text().splitlines()]
    assert sorted(rest) == sorted({f"item-{i}" for i in range(len(CLAIMS))} - tuning_ids)
    report = json.loads((tmp_path / "held-out" / "calibration.json").read_text())
    assert report["decisions"]["supports_citation"]["n"] == 3
    assert "|exclude:3@" in report["signature"] and "(3 excluded by items.jsonl)" in " ".join(report["notes"])
    assert "items" not in report  # per-item rows live in items.jsonl only
    first = json.loads((tmp_path / "tuning" / "calibration.json").read_text())
    assert "|sample:attributionbench=3|" in first["signature"]


@pytest.mark.parametrize(("option", "message"), [
    ("ab=3", "NAME one of attributionbench, wice, nuggets"),
    ("wice=0", "at least 1"),
    ("0", "at least 1"),
])
def test_a_bad_sample_option_is_one_line_naming_the_fix(tmp_path, option, message):
    data = tmp_path / "ab.jsonl"
    write_attributionbench(data)
    result = runner.invoke(app, ["calibrate", "--attributionbench", str(data), "--sample", option,
                                 "--out", str(tmp_path / "out")])
    assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output


def test_an_exclude_file_with_a_bad_line_names_the_file_and_line(tmp_path):
    data = tmp_path / "ab.jsonl"
    write_attributionbench(data)
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"item_id": "item-1"}\n{"id": 3}\n')
    result = runner.invoke(app, ["calibrate", "--attributionbench", str(data), "--exclude", str(bad),
                                 "--out", str(tmp_path / "out")])
    assert result.exit_code != 0 and f"{bad}:2:" in result.output.replace("\n", "")
