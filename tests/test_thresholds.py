"""Calibration of confidence and decision thresholds: reliability table and ECE against a
hand-computed example, the threshold fit and its cross-validation, the thresholds file and its place in the
signature, a threshold flipping a verdict, and calibrate --fit-threshold feeding eval --thresholds end to end."""

from __future__ import annotations

import json
from pathlib import Path

import litellm
import pytest
from pydantic import Field
from typer.testing import CliRunner

import judge.judging.thresholds
from judge.api import read_judgments
from judge.calibration.stats import apply_rule, cross_validated_threshold, fit_threshold, reliability
from judge.calibration.stats.confidence_calibration import Rule, agreement_metric
from judge.cli.app import app
from judge.errors import InputError
from judge.formats.judgments import DecisionRecord
from judge.judging.decisions import needs_citation, supports_citation
from judge.judging.decisions.asker import apply_threshold
from judge.judging.signature import JudgeSignature
from judge.judging.thresholds import FORMAT, ThresholdRule, ThresholdsFile, read_thresholds, thresholds_json
from judge.settings import DecisionThreshold, JudgeSettings, ModelSettings, RetryPolicy, Thresholds
from judge.testing import FakeEndpoint
from judge.testing.logprobs import verdict_at
from tests.conftest import smart_responder, tagged, user_message

litellm.suppress_debug_info = True
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
runner = CliRunner()
YES_NO = ("supported", "not_supported")
LABELS = list(YES_NO)


# ---------------------------------------------------------------------------------------------------------------
# reliability and ECE
# ---------------------------------------------------------------------------------------------------------------

def test_reliability_table_and_ece_by_hand():
    # 4 bins of width 0.25. Bin [0.5, 0.75): 0.6, 0.7 (one right) -> mean 0.65, accuracy 0.5, gap 0.15.
    # Bin [0.75, 1.0]: 0.8, 0.9, 1.0 (all right) -> mean 0.9, accuracy 1, gap 0.1. Bin [0, 0.25): 0.2 (wrong).
    conf = [0.6, 0.7, 0.8, 0.9, 1.0, 0.2]
    right = [True, False, True, True, True, False]
    result = reliability(conf, right, n_bins=4)
    assert [(b.lower, b.upper, b.count) for b in result.bins] == [(0.0, 0.25, 1), (0.25, 0.5, 0), (0.5, 0.75, 2),
                                                                 (0.75, 1.0, 3)]
    assert result.bins[1].mean_confidence is None and result.bins[1].accuracy is None
    assert result.bins[2].mean_confidence == pytest.approx(0.65) and result.bins[2].accuracy == 0.5
    assert result.bins[3].mean_confidence == pytest.approx(0.9) and result.bins[3].accuracy == 1.0
    # ECE = 1/6 * |0 - 0.2| + 2/6 * |0.5 - 0.65| + 3/6 * |1 - 0.9| = 0.0333 + 0.05 + 0.05
    assert result.ece == pytest.approx(0.2 / 6 + 0.3 / 6 + 0.3 / 6)
    assert result.mce == pytest.approx(0.2)
    # Brier = mean (c - correct)^2 = (0.16 + 0.49 + 0.04 + 0.01 + 0 + 0.04) / 6
    assert result.brier == pytest.approx(0.74 / 6)
    assert result.n == 6 and result.accuracy == pytest.approx(4 / 6) and result.mean_confidence == pytest.approx(0.7)


def test_reliability_of_nothing_is_undefined_not_zero():
    empty = reliability([], [])
    assert empty.n == 0 and empty.ece is None and empty.accuracy is None and all(b.count == 0 for b in empty.bins)
    with pytest.raises(ValueError):
        reliability([1.2], [True])


# ---------------------------------------------------------------------------------------------------------------
# fitting and cross-validation
# ---------------------------------------------------------------------------------------------------------------

def test_the_fit_raises_the_bar_for_the_verdict_the_judge_gives_too_easily():
    # The judge says "supported" to all six; the two it is wrong about it says with the least confidence.
    human = ["supported", "supported", "not_supported", "supported", "not_supported", "supported"]
    judge = ["supported"] * 6
    conf = [0.95, 0.9, 0.6, 0.85, 0.55, 0.8]
    rule = fit_threshold(human, judge, conf, YES_NO, LABELS)
    assert (rule.verdict, rule.other, rule.threshold) == ("supported", "not_supported", pytest.approx(0.7))
    assert apply_rule(judge, conf, rule) == human
    assert agreement_metric(human, apply_rule(judge, conf, rule), LABELS, "kappa") == 1.0
    assert agreement_metric(human, judge, LABELS, "kappa") == 0.0  # p_o = p_e = 4/6 before


def test_a_threshold_that_does_not_help_is_zero_and_failures_never_flip():
    human = ["supported", "not_supported", "supported", "not_supported"]
    judge = ["supported", "not_supported", "supported", None]
    conf = [0.9, 0.6, 0.7, None]
    rule = fit_threshold(human, judge, conf, YES_NO, LABELS)
    assert rule.threshold == 0.0  # already right everywhere it answered: no flip is the best (and fewest flips)
    assert apply_rule(judge, conf, Rule(verdict="supported", other="not_supported", threshold=0.99))[3] is None


def test_the_balanced_accuracy_fit_can_choose_differently_from_kappa():
    human = ["supported"] * 8 + ["not_supported"] * 2
    judge = ["supported"] * 10
    conf = [0.9] * 8 + [0.5, 0.5]
    kappa_rule = fit_threshold(human, judge, conf, YES_NO, LABELS, "kappa")
    balanced_rule = fit_threshold(human, judge, conf, YES_NO, LABELS, "balanced_accuracy")
    assert kappa_rule.threshold == balanced_rule.threshold == pytest.approx(0.7)  # both fix it here
    assert agreement_metric(human, apply_rule(judge, conf, balanced_rule), LABELS, "balanced_accuracy") == 1.0


def toy_items(n: int = 30):
    """Judge says "supported" to all; the truly unsupported third it says with confidence 0.5-0.6."""
    human, conf = [], []
    for i in range(n):
        unsupported = i % 3 == 0
        human.append("not_supported" if unsupported else "supported")
        conf.append(0.5 + (i % 7) / 70 if unsupported else 0.8 + (i % 5) / 50)
    return [f"i{i}" for i in range(n)], human, ["supported"] * n, conf


def test_cross_validation_thresholds_each_item_with_a_rule_fitted_without_it():
    ids, human, judge, conf = toy_items()
    fit = cross_validated_threshold("supports_citation", ids, human, judge, conf, YES_NO, LABELS, folds=5, seed=3,
                                    n_boot=50)
    assert fit is not None and fit.folds == 5 and len(fit.fold_rules) == 5
    # re-derive the held-out labels: every fold's rule is the fit on the other folds, applied to the fold
    import numpy as np

    fold_of = np.empty(len(ids), dtype=int)
    fold_of[np.random.default_rng(3).permutation(len(ids))] = np.arange(len(ids)) % 5
    for k, rule in enumerate(fit.fold_rules):
        train = [i for i in range(len(ids)) if fold_of[i] != k]
        assert rule == fit_threshold([human[i] for i in train], [judge[i] for i in train],
                                     [conf[i] for i in train], YES_NO, LABELS)
    held_out = [apply_rule([judge[i]], [conf[i]], fit.fold_rules[fold_of[i]])[0] for i in range(len(ids))]
    assert fit.after.confusion == [[sum(h == "supported" and a == "supported" for h, a in zip(human, held_out)),
                                    sum(h == "supported" and a == "not_supported" for h, a in zip(human, held_out))],
                                   [sum(h == "not_supported" and a == "supported" for h, a in zip(human, held_out)),
                                    sum(h == "not_supported" and a == "not_supported"
                                        for h, a in zip(human, held_out))]]
    assert fit.before.kappa == 0.0 and fit.after.kappa == 1.0  # the separation is clean, so every fold finds it
    assert sorted(fit.flipped_ids) == sorted(i for i, h in zip(ids, human) if h == "not_supported")
    assert fit.rule.verdict == "supported" and 0.6 < fit.rule.threshold < 0.8
    assert fit.mcnemar.b == 0 and fit.mcnemar.c == 10


def test_too_few_items_with_a_confidence_fit_nothing():
    ids, human, judge, conf = toy_items(9)
    assert cross_validated_threshold("supports_citation", ids, human, judge, conf, YES_NO, LABELS) is None


# ---------------------------------------------------------------------------------------------------------------
# the thresholds file, the signature, applying a threshold
# ---------------------------------------------------------------------------------------------------------------

def thresholds_data(threshold: float = 0.9, verdict: str = "supported") -> ThresholdsFile:
    return ThresholdsFile(judge="argue-judge:0|judge:openai/fake", metric="kappa", fitted_on={"items": 40},
                          decisions={"supports_citation": ThresholdRule(verdict=verdict, threshold=threshold,
                                                                        items=40)})


def test_the_thresholds_file_round_trips(tmp_path):
    path = tmp_path / "thresholds.json"
    path.write_text(thresholds_json(thresholds_data()))
    rules, data = read_thresholds(path)
    assert rules.rules == (DecisionThreshold("supports_citation", True, 0.9),)
    assert data == thresholds_data() and thresholds_json(data) == path.read_text()
    assert json.loads(path.read_text())["format"] == FORMAT
    assert data.decisions["supports_citation"].model_extra == {"items": 40}  # fit records are kept


@pytest.mark.parametrize(("content", "message"), [
    ("{", "malformed JSON"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),  # were tracebacks
    ('{"format": ' + "9" * 5000 + "}", "4,300 digits"),
    ('{"format": "other"}', "not a thresholds file"),
    (json.dumps({"format": FORMAT, "judge": "j", "metric": "kappa",
                 "decisions": {"supports_citation": {"verdict": "supported", "threshold": 1.5}}}),
     "decisions.supports_citation.threshold"),
    (json.dumps({"format": FORMAT, "judge": "j", "metric": "kappa",
                 "decisions": {"supports_citation": {"verdict": "yes", "threshold": 0.5}}}), "is not one of"),
    (json.dumps({"format": FORMAT, "judge": "j", "metric": "kappa",
                 "decisions": {"answers_nugget": {"verdict": "answers", "threshold": 0.5}}}),
     "no threshold applies"),
], ids=["malformed", "nested-100k-deep", "5000-digit-number", "other-format", "threshold-above-1", "bad-verdict",
        "decision-without-threshold"])
def test_a_bad_thresholds_file_is_one_line_naming_it(tmp_path, content, message):
    path = tmp_path / "t.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as caught:
        read_thresholds(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_the_judge_signature_names_the_thresholds_and_logprobs():
    model = ModelSettings("openai/fake")
    plain = JudgeSignature.of(model, RetryPolicy(), JudgeSettings())
    rules, rules_other = (read_rules(thresholds_data(0.9)), read_rules(thresholds_data(0.8)))
    signed = JudgeSignature.of(model, RetryPolicy(), JudgeSettings(thresholds=rules))
    assert "thr:" not in plain.short() and "|lp:" not in plain.short()  # unchanged for runs without either
    assert signed.short() == plain.short() + f"|thr:{rules.digest}"
    assert JudgeSignature.of(model, RetryPolicy(), JudgeSettings(thresholds=rules_other)).short() != signed.short()
    assert json.loads(signed.as_json())["thresholds"] == rules.digest
    with_lp = JudgeSignature.of(ModelSettings("openai/fake", logprobs=True), RetryPolicy(), JudgeSettings())
    assert with_lp.short() == plain.short() + "|lp:yes"
    assert "|lp:yes" in JudgeSignature.of(ModelSettings("argue-local/m"), RetryPolicy(), JudgeSettings()).short()


def read_rules(data: ThresholdsFile) -> Thresholds:
    from judge.judging.thresholds import to_thresholds

    return to_thresholds(data)


def test_the_digest_depends_on_the_rules_not_on_the_record_of_the_fit():
    a = read_rules(thresholds_data())
    b = read_rules(thresholds_data().model_copy(update={"fitted_on": {"items": 99}}))
    assert a.digest == b.digest and len(a.digest) == 8


def test_a_threshold_flips_a_verdict_below_it_and_keeps_both():
    rules = Thresholds((DecisionThreshold("supports_citation", True, 0.9),), "abcd1234")
    unsure = DecisionRecord(decision="supports_citation", verdict=True, confidence=0.7, rationale="r")
    flipped = apply_threshold(unsure, rules)
    assert (flipped.verdict, flipped.model_verdict, flipped.threshold) == (False, True, 0.9)
    data = json.loads(flipped.model_dump_json())
    assert data["verdict"] is False and data["model_verdict"] is True and data["threshold"] == 0.9
    sure = apply_threshold(unsure.model_copy(update={"confidence": 0.95}), rules)
    assert (sure.verdict, sure.model_verdict, sure.threshold) == (True, None, 0.9)
    # the other verdict, no confidence, no verdict or another decision: untouched
    for record in (unsure.model_copy(update={"verdict": False}), unsure.model_copy(update={"confidence": None}),
                   unsure.model_copy(update={"verdict": None}),
                   DecisionRecord(decision="needs_citation", verdict=True, confidence=0.1)):
        assert apply_threshold(record, rules) == record


# ---------------------------------------------------------------------------------------------------------------
# calibrate --fit-threshold -> eval --thresholds, end to end on the fake endpoint
# ---------------------------------------------------------------------------------------------------------------

UNSURE = "(unsure)"


def claims(n: int = 15) -> list[tuple[str, str, str]]:
    """(claim, reference, human label). Every third claim the reference does not state, but the human label says
    attributable (the judge will be wrong, and unsure); the others the reference states word for word."""
    rows = []
    for i in range(n):
        reference = f"The station number {i} opened to passengers in {1900 + i} after years of building."
        if i % 3 == 0:
            rows.append((f"The station number {i} has a {UNSURE} clock tower {i}.", reference, "attributable"))
        else:
            rows.append((f"The station number {i} opened in {1900 + i}.", reference, "attributable"
                         if i % 3 == 1 else "not attributable"))
    return rows


def unsure_when_marked(request: dict, tokens: list[str]) -> list[list[tuple[str, float]]]:
    """The verdict word at 0.55 for claims marked unsure, else 0.9; its rival label takes the rest."""
    return verdict_at(tokens, 0.55 if UNSURE in tagged(user_message(request), "sentence") else 0.9)


def write_claims(path: Path) -> None:
    """`claims()` as an AttributionBench file."""
    path.write_text("".join(json.dumps({"id": f"item-{i}", "claim": c, "references": [r], "attribution_label": lab,
                                        "src_dataset": "toy"})
                            + "\n" for i, (c, r, lab) in enumerate(claims())))


def test_calibrate_fits_a_threshold_that_eval_applies(tmp_path):
    data = tmp_path / "ab.jsonl"
    write_claims(data)
    out = tmp_path / "cal"
    with FakeEndpoint(smart_responder, logprobs=unsure_when_marked) as ep:
        result = runner.invoke(app, [
            "calibrate", "--attributionbench", str(data), "--model", "openai/fake", "--api-base", ep.api_base,
            "--api-key", "x", "--cache-dir", str(tmp_path / "cache"), "--n-boot", "100", "--logprobs",
            "--fit-threshold", "--out", str(out)])
        assert result.exit_code == 0, result.output
        report = json.loads((out / "calibration.json").read_text())
        confidence = report["confidence"]["supports_citation"]
        # 5 unsure items (0.55, all wrong), 10 sure ones (0.9): 5 of them right (i % 3 == 1), 5 wrong
        assert confidence["n"] == 15 and confidence["accuracy"] == pytest.approx(5 / 15)
        assert confidence["ece"] == pytest.approx(5 / 15 * 0.55 + 10 / 15 * abs(0.5 - 0.9), abs=1e-6)
        fit = report["thresholds"]["supports_citation"]
        assert fit["rule"]["verdict"] == "not_supported" and fit["rule"]["threshold"] == pytest.approx(0.725)
        assert fit["after"]["kappa"] > fit["before"]["kappa"]
        assert "|fit:kappa,5fold" in report["signature"] and "|lp:yes" in report["signature"]
        markdown = (out / "calibration.md").read_text()
        assert "## Confidence" in markdown and "## Decision thresholds (cross-validated)" in markdown
        assert (out / "reliability_supports_citation.png").exists()
        thresholds = json.loads((out / "thresholds.json").read_text())
        assert thresholds["decisions"]["supports_citation"]["verdict"] == "not_supported"
        assert thresholds["judge"] in report["signature"] and thresholds["fitted_on"]["items"] == 15
        from judge.judging.thresholds import decision_key
        rule = thresholds["decisions"]["supports_citation"]
        assert {k: rule[k] for k in ("prompt_hash", "schema_hash")} == decision_key("supports_citation", None)

        eval_args = ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"), "--docs",
                     str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
                     "--api-base", ep.api_base, "--api-key", "x", "--cache-dir", str(tmp_path / "cache"), "--logprobs"]
        plain = runner.invoke(app, [*eval_args, "--out", str(tmp_path / "plain")])
        assert plain.exit_code == 0, plain.output
        applied = runner.invoke(app, [*eval_args, "--thresholds", str(out / "thresholds.json"),
                                      "--out", str(tmp_path / "applied")])
        assert applied.exit_code == 0, applied.output
        assert f"thresholds: {out / 'thresholds.json'}" in applied.output and "warning" not in applied.output
        refused = runner.invoke(app, [*eval_args[:-1], "--thresholds", str(out / "thresholds.json"),
                                      "--out", str(tmp_path / "refused")])
        assert refused.exit_code == 2 and "needs log-probabilities" in refused.output
    # every not_supported said at 0.9 (>= 0.725) stands; on the example every verdict is said at 0.9, so none flips
    records = [d for j in read_judgments(tmp_path / "applied" / "judgments.jsonl") for s in j.sentences
               for d in s.decisions if d.decision == "supports_citation" and d.prompt_hash]
    assert any(d.verdict is False for d in records)
    assert all(d.threshold == pytest.approx(0.725) and d.model_verdict is None for d in records if d.verdict is False)
    assert all(d.threshold is None for d in records if d.verdict is True)  # the rule guards not_supported only
    signature = read_judgments(tmp_path / "applied" / "judgments.jsonl")[0].signature
    assert signature == read_judgments(tmp_path / "plain" / "judgments.jsonl")[0].signature + \
        f"|thr:{read_thresholds(out / 'thresholds.json')[0].digest}"


def test_eval_thresholds_flip_verdicts_in_the_judgments(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(thresholds_data(0.95).model_dump_json())  # keep "supported" only at >= 0.95
    with FakeEndpoint(smart_responder, logprobs=unsure_when_marked) as ep:  # every verdict at 0.9 here
        result = runner.invoke(app, [
            "eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"), "--docs",
            str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
            "--api-base", ep.api_base, "--api-key", "x", "--cache-dir", str(tmp_path / "cache"), "--logprobs",
            "--thresholds", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    judgments = list(read_judgments(tmp_path / "out" / "judgments.jsonl"))
    supports = [d for j in judgments for s in j.sentences for d in s.decisions
                if d.decision == "supports_citation" and d.prompt_hash]
    flipped = [d for d in supports if d.model_verdict is True]
    assert flipped and all(d.verdict is False and d.confidence == 0.9 and d.threshold == 0.95 for d in flipped)
    assert not any(d.verdict for d in supports)  # nothing said "supported" at >= 0.95
    # the flowchart followed the applied verdict: no cited sentence came out supported (#2 or #3)
    assert not any(s.outcome in (2, 3) for j in judgments for s in j.sentences)
    text = (tmp_path / "out" / "judgments.jsonl").read_text()
    assert '"model_verdict":true' in text.replace(" ", "") and '"threshold":0.95' in text.replace(" ", "")


def test_a_thresholds_file_fits_a_judge_by_model_and_its_decisions_prompt_and_schema_only(tmp_path):
    from judge.judging.thresholds import decision_key, misfits

    model = ModelSettings("openai/fake", logprobs=True)
    rule = thresholds_data().decisions["supports_citation"].model_copy(update=decision_key("supports_citation", None))
    data = thresholds_data().model_copy(update={"decisions": {"supports_citation": rule}})
    assert misfits(data, model, None) == []  # the passage budget, the other decisions: not part of the key
    assert misfits(data, ModelSettings("openai/other"), None) == [
        "it was fitted for the model openai/fake, not openai/other"]
    assert misfits(data, model, _edited_prompts(tmp_path, "needs_citation")) == []  # another decision's prompt
    [differs] = misfits(data, model, _edited_prompts(tmp_path, "supports_citation"))
    assert differs.startswith("supports_citation's prompt is ") and rule.prompt_hash in differs
    assert misfits(thresholds_data(), model, None) == [  # a file that names the model only is not enough
        "supports_citation's prompt is 4efaea34, its rule was fitted for an unrecorded one",
        f"supports_citation's response schema is {rule.schema_hash}, its rule was fitted for an unrecorded one"]


def test_eval_applies_the_shipped_thresholds_to_the_judge_they_were_fitted_for(tmp_path, monkeypatch):
    import shutil

    import judge.judging.thresholds
    from judge.judging.prompts import default_prompts_dir
    from judge.judging.thresholds import decision_key

    rule = thresholds_data(0.95).decisions["supports_citation"].model_copy(
        update=decision_key("supports_citation", None))
    shipped = tmp_path / "embedded-thresholds.json"
    shipped.write_text(thresholds_json(thresholds_data(0.95).model_copy(
        update={"decisions": {"supports_citation": rule}})))
    monkeypatch.setattr(judge.judging.thresholds, "SHIPPED_THRESHOLDS", shipped)
    digest = read_thresholds(shipped)[0].digest
    base = ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"), "--docs",
            str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
            "--api-key", "x", "--cache-dir", str(tmp_path / "cache")]
    edited = tmp_path / "prompts"
    shutil.copytree(default_prompts_dir(), edited)
    (edited / "supports_citation.md").write_text((edited / "supports_citation.md").read_text() + "\nBe strict.\n")
    with FakeEndpoint(smart_responder, logprobs=unsure_when_marked) as ep:
        args = [*base, "--api-base", ep.api_base]
        default = runner.invoke(app, [*args, "--logprobs", "--out", str(tmp_path / "default")])
        off = runner.invoke(app, [*args, "--logprobs", "--thresholds", "none", "--out", str(tmp_path / "off")])
        no_logprobs = runner.invoke(app, [*args, "--out", str(tmp_path / "no-logprobs")])
        other_prompts = runner.invoke(app, [*args, "--logprobs", "--prompts", str(edited),
                                            "--out", str(tmp_path / "edited")])
    for result in (default, off, no_logprobs, other_prompts):
        assert result.exit_code == 0, result.output

    def signature(name):
        return read_judgments(tmp_path / name / "judgments.jsonl")[0].signature

    assert signature("default").endswith(f"|thr:{digest}") and "embedded-thresholds.json" in default.output
    assert "|thr:" not in signature("off") and "|thr:" not in signature("no-logprobs")
    assert "|thr:" not in signature("edited")  # fitted for another supports_citation prompt: not applied, loudly
    assert "warning: the shipped thresholds (embedded-thresholds.json) are NOT applied: supports_citation's prompt" \
        in other_prompts.output and "--thresholds none" in other_prompts.output
    assert "warning" not in off.output + no_logprobs.output
    flipped = [d for j in read_judgments(tmp_path / "default" / "judgments.jsonl") for s in j.sentences
               for d in s.decisions if d.model_verdict is not None]
    assert flipped and all(d.threshold == 0.95 for d in flipped)


def _edited_prompts(tmp_path: Path, decision: str) -> Path:
    import shutil

    from judge.judging.prompts import default_prompts_dir

    folder = tmp_path / f"prompts-{decision}"
    shutil.copytree(default_prompts_dir(), folder)
    (folder / f"{decision}.md").write_text((folder / f"{decision}.md").read_text() + "\nBe strict.\n")
    return folder


class SupportsCitationWithNote(supports_citation.SupportsCitation):
    """SupportsCitation with one more field: another response schema."""

    note: str = Field("", description="anything else")


class NeedsCitationWithNote(needs_citation.NeedsCitation):
    """NeedsCitation with one more field: another response schema."""

    note: str = Field("", description="anything else")


def _with_schema_changed(monkeypatch, decision: str) -> None:
    """The registry with `decision`'s response model given one more field (its JSON schema changes)."""
    from dataclasses import replace

    from judge.judging import decisions

    changed = {"supports_citation": SupportsCitationWithNote, "needs_citation": NeedsCitationWithNote}[decision]
    specs = [replace(s, response_model=changed) if s.name == decision else s for s in decisions.REGISTRY]
    monkeypatch.setattr(decisions, "REGISTRY", decisions.Registry(specs))


def test_the_shipped_threshold_is_refused_only_for_a_change_of_the_decision_it_guards(tmp_path, monkeypatch):
    import warnings

    from judge.judging.thresholds import ThresholdsWarning, choose_thresholds, resolve_thresholds
    from judge.llm.embedded.weights import EMBEDDED_MODEL
    from judge.settings import DEFAULT_THRESHOLDS

    embedded = ModelSettings(EMBEDDED_MODEL)
    shipped = read_thresholds(judge.judging.thresholds.SHIPPED_THRESHOLDS)[0]
    assert list(read_thresholds(judge.judging.thresholds.SHIPPED_THRESHOLDS)[1].decisions) == ["supports_citation"]
    assert choose_thresholds(None, embedded, None).rules == shipped
    # another decision's prompt: kept
    assert choose_thresholds(None, embedded, _edited_prompts(tmp_path, "needs_citation")).rules == shipped
    # its own decision's prompt: refused, with a warning that names the decision and what to do
    own = _edited_prompts(tmp_path, "supports_citation")
    refused = choose_thresholds(None, embedded, own)
    assert refused.rules is None and refused.refused
    assert refused.notice.startswith("warning: the shipped thresholds (embedded-thresholds.json) are NOT applied: "
                                     "supports_citation's prompt is ")
    assert "argue-judge calibrate --fit-threshold" in refused.notice and "--thresholds none" in refused.notice
    with pytest.warns(ThresholdsWarning, match="supports_citation's prompt is"):
        assert resolve_thresholds(embedded, JudgeSettings(prompts_dir=own)).thresholds is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a judge the rules fit, or that asked for none, hears nothing
        assert resolve_thresholds(embedded, JudgeSettings()).thresholds == shipped
        assert resolve_thresholds(embedded, JudgeSettings(prompts_dir=own, thresholds=None)).thresholds is None
        assert resolve_thresholds(ModelSettings("openai/gpt-4o-mini", logprobs=True),
                                  JudgeSettings(thresholds=DEFAULT_THRESHOLDS)).thresholds is None
    # another decision's response schema: kept; its own decision's: refused
    with monkeypatch.context() as patched:
        _with_schema_changed(patched, "needs_citation")
        assert choose_thresholds(None, embedded, None).rules == shipped
    with monkeypatch.context() as patched:
        _with_schema_changed(patched, "supports_citation")
        refused = choose_thresholds(None, embedded, None)
        assert refused.rules is None and "supports_citation's response schema is " in refused.notice


def test_calibrate_measures_the_judge_with_thresholds_applied(tmp_path):
    data = tmp_path / "ab.jsonl"
    write_claims(data)
    rules = tmp_path / "t.json"
    rules.write_text(thresholds_data(0.95).model_dump_json())  # keep "supported" only at >= 0.95: never here
    base = ["calibrate", "--attributionbench", str(data), "--model", "openai/fake", "--api-key", "x",
            "--cache-dir", str(tmp_path / "cache"), "--n-boot", "50", "--logprobs", "--no-plots"]
    with FakeEndpoint(smart_responder, logprobs=unsure_when_marked) as ep:
        plain = runner.invoke(app, [*base, "--api-base", ep.api_base, "--out", str(tmp_path / "plain")])
        calls = ep.calls
        held = runner.invoke(app, [*base, "--api-base", ep.api_base, "--thresholds", str(rules),
                                   "--out", str(tmp_path / "held")])
        assert ep.calls == calls  # the same answers, from the cache: only the rules differ
        both = runner.invoke(app, [*base, "--api-base", ep.api_base, "--thresholds", str(rules), "--fit-threshold",
                                   "--out", str(tmp_path / "both")])
    assert plain.exit_code == 0 and held.exit_code == 0, plain.output + held.output
    assert both.exit_code == 2 and "drop --thresholds" in both.output

    def judged(name):
        return [json.loads(line)["judge"] for line in (tmp_path / name / "items.jsonl").read_text().splitlines()]

    assert "supported" in judged("plain") and set(judged("held")) == {"not_supported"}
    signature = json.loads((tmp_path / "held" / "calibration.json").read_text())["signature"]
    assert f"|thr:{read_thresholds(rules)[0].digest}|" in signature


# ---------------------------------------------------------------------------------------------------------------
# one place decides the judge's defaults
# ---------------------------------------------------------------------------------------------------------------

class _Captured(Exception):
    """Raised by a stand-in for the library call, once the CLI has built its config."""


def test_eval_calibrate_and_the_python_api_build_the_same_embedded_judge(tmp_path, monkeypatch):
    import judge.calibration.suite
    import judge.run.evaluate
    from judge.calibration.suite import CalibrationConfig
    from judge.llm.embedded.weights import EMBEDDED_MODEL
    from judge.run.spec import EvalSpec

    configs = {}

    def capture(name):
        def stand_in(_inputs_or_items, config, *args, **kwargs):
            configs[name] = config
            raise _Captured
        return stand_in

    monkeypatch.setattr(judge.run.evaluate, "evaluate_async", capture("eval"))
    monkeypatch.setattr(judge.calibration.suite, "calibrate", capture("calibrate"))
    items = tmp_path / "ab.jsonl"
    items.write_text(json.dumps({"id": "i1", "claim": "The bridge opened in 1932.", "src_dataset": "toy",
                                 "references": ["The bridge opened in 1932."],
                                 "attribution_label": "attributable"}) + "\n")
    evaluated = runner.invoke(app, ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
                                    "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"),
                                    "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "out")])
    calibrated = runner.invoke(app, ["calibrate", "--attributionbench", str(items), "--cache-dir",
                                     str(tmp_path / "cache"), "--out", str(tmp_path / "cal"), "--no-plots"])
    assert isinstance(evaluated.exception, _Captured) and isinstance(calibrated.exception, _Captured)
    shipped = read_thresholds(judge.judging.thresholds.SHIPPED_THRESHOLDS)[0]
    api = EvalSpec.of(model=ModelSettings(EMBEDDED_MODEL)).resolve().judge
    calibration_api = CalibrationConfig.resolved(model=ModelSettings(EMBEDDED_MODEL)).judge
    for built in (configs["eval"].judge, configs["calibrate"].judge, api, calibration_api):
        assert built.thresholds == shipped, "every entry point applies the shipped rules to the embedded judge"
        assert (built.prompts_dir, built.on_injection) == (None, "quarantine")
    assert configs["eval"].model.model == configs["calibrate"].model.model == EMBEDDED_MODEL
    assert configs["eval"].model.sampling() == configs["calibrate"].model.sampling()
    notice = "thresholds: embedded-thresholds.json, fitted for this judge on dev data"
    assert evaluated.output.splitlines()[0].startswith(notice)
    assert calibrated.output.splitlines()[0].startswith(notice)


def test_fitting_thresholds_and_thresholds_none_use_the_models_own_verdicts():
    from judge.calibration.suite import CalibrationConfig
    from judge.llm.embedded.weights import EMBEDDED_MODEL
    from judge.run.spec import EvalSpec

    embedded = ModelSettings(EMBEDDED_MODEL)
    assert CalibrationConfig.resolved(model=embedded, fit_metric="kappa").judge.thresholds is None
    assert EvalSpec.of(model=embedded, judge=JudgeSettings(thresholds=None)).resolve().judge.thresholds is None
    assert EvalSpec.of(model=ModelSettings("openai/gpt-4o-mini")).resolve().judge.thresholds is None  # not fitted
