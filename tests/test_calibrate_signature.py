"""What calibrate's signature and notices name is what was used: comparing judgments already made (--human with
--judged) asks no model, so neither the default embedded judge nor its thresholds are named; the judge the
judged records name is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import judge
from judge.cli.app import app
from judge.errors import SettingError
from judge.formats.judgments import write_judgments
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.testing import FakeEndpoint, smart_responder

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
runner = CliRunner()


@pytest.fixture(scope="module")
def judged_and_human(tmp_path_factory):
    """The bundled example judged by a hosted model (the fake endpoint), and the same records as a person's."""
    folder = tmp_path_factory.mktemp("judgments")
    with FakeEndpoint(smart_responder) as model:
        evaluation = judge.evaluate(str(EXAMPLES / "reports"), requests=str(EXAMPLES / "requests.jsonl"),
                                    docs=str(EXAMPLES / "docs.jsonl"), nuggets=str(EXAMPLES / "nuggets"),
                                    model="openai/fake", api_base=model.api_base, api_key="none", cache=None)
    judged = list(evaluation.judgments)
    human = [j.model_copy(update={"assessor": "human:alice", "signature": None}) for j in judged]
    write_judgments(folder / "judged.jsonl", judged)
    write_judgments(folder / "human.jsonl", human)
    return folder / "judged.jsonl", folder / "human.jsonl", judged


def test_the_api_signs_with_the_judge_the_judged_records_name(judged_and_human, tmp_path, monkeypatch):
    judged_file, human_file, judged = judged_and_human
    monkeypatch.chdir(tmp_path)  # the default cache folder would appear here if one were opened
    results = judge.calibrate(human=str(human_file), judged=str(judged_file), n_boot=50)
    assert judged[0].signature is not None and "judge:openai/fake" in judged[0].signature
    assert EMBEDDED_MODEL not in results.signature and "thr:" not in results.signature
    assert results.signature.startswith(f"argue-judge:{judge.__version__}|judged:openai/fake@")
    assert "|items:0|" in results.signature
    assert not list(tmp_path.iterdir())  # no model asked, so no decision cache opened


def test_the_command_names_no_unused_judge_or_thresholds(judged_and_human, tmp_path):
    judged_file, human_file, _ = judged_and_human
    result = runner.invoke(app, ["calibrate", "--human", str(human_file), "--judged", str(judged_file),
                                 "--n-boot", "20", "--no-plots", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "thresholds:" not in result.output and EMBEDDED_MODEL not in result.output
    signature = json.loads((tmp_path / "out" / "calibration.json").read_text(encoding="utf-8"))["signature"]
    assert "judged:openai/fake@" in signature and "thr:" not in signature and EMBEDDED_MODEL not in signature


def test_another_judged_record_signs_differently(judged_and_human):
    from judge.calibration.suite import judged_tag

    _, _, judged = judged_and_human
    other = [j.model_copy(update={"signature": j.signature.replace("temp:0", "temp:0.7")}) for j in judged]
    assert judged_tag(judged).split("@")[0] == judged_tag(other).split("@")[0] == "openai/fake"
    assert judged_tag(judged) != judged_tag(other)
    assert judged_tag([j.model_copy(update={"signature": None, "assessor": "gpt-x"}) for j in judged]) \
        .startswith("gpt-x@")


@pytest.mark.parametrize(("option", "value"), [("fit_metric", "kappa"), ("attacks", "all"),
                                               ("against", str(EXAMPLES))])
def test_what_only_an_asked_judge_uses_is_refused_without_items(judged_and_human, option, value):
    judged_file, human_file, _ = judged_and_human
    with pytest.raises(SettingError, match=rf"^{option} apply to the judge asked about items"):
        judge.calibrate(human=str(human_file), judged=str(judged_file), cache=None, **{option: value})


def test_the_command_refuses_thresholds_without_items(judged_and_human, tmp_path):
    judged_file, human_file, _ = judged_and_human
    result = runner.invoke(app, ["calibrate", "--human", str(human_file), "--judged", str(judged_file),
                                 "--thresholds", "none", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "--thresholds" in result.output and "judgments already made" in result.output
    assert not (tmp_path / "out").exists()
