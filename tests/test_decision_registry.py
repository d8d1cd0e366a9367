"""A decision is one module plus its place in the flowchart: the registry is built from the modules the flowchart
names, and it is where every per-decision lookup goes, so a new decision module (a toy one here,
tests/data/toy_decision/, not shipped) is picked up by the signature, the thresholds file, the view, the asker, the
walker and the judgments reader without an edit anywhere else."""

from __future__ import annotations

import ast
import asyncio
import importlib
import importlib.util
import pkgutil
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from judge.errors import InputError
from judge.formats.judgments import DecisionRecord, ReportJudgment, SentenceJudgment, iter_judgment_lines
from judge.judging import decisions, flowchart
from judge.judging.decisions import REGISTRY, Registry, claims_absence, needs_citation
from judge.judging.decisions.asker import question, verdict_values
from judge.judging.decisions.base import contract_hash
from judge.judging.decisions.spec import DecisionSpec, SentenceCase
from judge.judging.fingerprints import prompt_hashes, prompts_tag, schema_hash
from judge.judging.flowchart import DIAMONDS, Question
from judge.judging.passages import PassagePolicy
from judge.judging.prompts import default_prompts_dir
from judge.judging.signature import JudgeSignature
from judge.judging.thresholds import ThresholdsFile, to_thresholds
from judge.judging.walker import LLMOracle
from judge.settings import DecisionThreshold, JudgeSettings, ModelSettings, RetryPolicy
from judge.types import Request, Sentence
from judge.view.model import _decision_view, _DocumentCache

TOY = Path(__file__).parent / "data" / "toy_decision"
REQUEST = Request(request_id="r1", title="Ports", problem_statement="Which ports grew fastest?")
SENTENCE = Sentence(index=0, text="The port reportedly doubled its traffic.")


def load_toy() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hedged_claim", TOY / "hedged_claim.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # the contract hash reads the response model's source through its module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def toy(monkeypatch, tmp_path):
    """The shipped registry plus the toy decision, and a prompts folder with the shipped prompts and the toy's."""
    module = load_toy()
    prompts = tmp_path / "prompts"
    shutil.copytree(default_prompts_dir(), prompts)
    shutil.copy(TOY / f"{module.DECISION.prompt}.md", prompts)
    monkeypatch.setattr(decisions, "REGISTRY", Registry([*REGISTRY, module.DECISION]))
    return module, prompts


def test_the_registry_is_the_flowcharts_diamonds_in_its_order():
    assert REGISTRY.names == DIAMONDS == ("supports_citation", "answers_nugget", "claims_absence", "absence_nugget",
                                         "needs_citation", "repeated_claim")


def test_the_flowchart_asks_every_diamond_it_names_and_no_other():
    """DIAMONDS and the questions `flow` yields are both in flowchart.py: this keeps the two the same."""
    tree = ast.parse(Path(flowchart.__file__).read_text(encoding="utf-8"))
    asked = [call.args[0].value for call in ast.walk(tree)
             if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "Question"
             and call.args and isinstance(call.args[0], ast.Constant)]
    assert set(asked) == set(DIAMONDS)


def test_a_diamond_without_a_module_or_a_module_misnamed_is_refused_in_one_line():
    with pytest.raises(ModuleNotFoundError, match="the flowchart asks 'hedged_claim', but there is no decision "
                                                  "module judge.judging.decisions.hedged_claim"):
        Registry.of_package(decisions.__name__, [*DIAMONDS, "hedged_claim"])
    with pytest.raises(ValueError, match="declares the decision 'supports_citation', not "
                                         "'decisions.supports_citation'"):
        Registry.of_package("judge.judging", ["decisions.supports_citation"])


def test_a_judgments_file_naming_an_unknown_decision_is_refused_with_its_line(tmp_path):
    record = DecisionRecord(decision="suports_citation", verdict=True, doc_ids=["d1"])
    judgment = ReportJudgment(run_id="r", request_id="q", sentences=[
        SentenceJudgment(index=0, text="A claim.", citations=["d1"], decisions=[record])])
    path = tmp_path / "judgments.jsonl"
    path.write_text(judgment.model_dump_json() + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"judgments.jsonl:1: .*'suports_citation' is not a decision of the judge; "
                                         "write one of supports_citation, answers_nugget"):
        list(iter_judgment_lines(path, decisions=REGISTRY.names))
    # with the toy decision among the judge's, the same reader takes its records
    toy = judgment.model_copy(update={"sentences": [judgment.sentences[0].model_copy(update={
        "decisions": [record.model_copy(update={"decision": "hedged_claim"})]})]})
    path.write_text(toy.model_dump_json() + "\n", encoding="utf-8")
    [(_, _, _, read)] = iter_judgment_lines(path, decisions=[*REGISTRY.names, "hedged_claim"])
    assert read.sentences[0].decisions[0].decision == "hedged_claim"


def test_the_shipped_declarations_keep_the_signature_and_the_schema_hash():
    assert prompts_tag(prompt_hashes(None)) == ("sc=4efaea34+an=75de16c5+ca=9e974835+ab=be1c6fd1+nc=47b2941f+"
                                                "rc=982ac4c5")
    assert schema_hash() == "fbc716c3"
    assert REGISTRY.with_threshold() == ("supports_citation", "claims_absence", "needs_citation", "repeated_claim")


def test_every_decision_names_its_own_prompt_file():
    for spec in REGISTRY:
        assert spec.template().path == default_prompts_dir().resolve() / f"{spec.prompt}.md"


def test_a_registry_refuses_a_repeated_name_or_abbreviation_and_a_module_without_a_declaration():
    with pytest.raises(ValueError, match="share a name: needs_citation"):
        Registry([needs_citation.DECISION, needs_citation.DECISION])
    clash = load_toy().DECISION
    with pytest.raises(ValueError, match="share a signature abbreviation: ca"):
        Registry([claims_absence.DECISION, type(clash)(**{**clash.__dict__, "abbreviation": "ca"})])
    with pytest.raises(TypeError, match="declares no DECISION"):
        Registry.of_modules([ModuleType("not_a_decision")])
    with pytest.raises(KeyError, match="unknown decision 'hedged_claim'"):
        REGISTRY["hedged_claim"]


def test_the_signature_prints_a_new_decisions_abbreviation_and_prompt_hash(toy):
    module, prompts = toy
    toy_hash = module.DECISION.template(prompts).short_hash
    signature = JudgeSignature.of(ModelSettings("scripted/judge"), RetryPolicy(), JudgeSettings(prompts_dir=prompts))
    assert f"+rc=982ac4c5+hc={toy_hash}|" in signature.short()
    assert signature.as_dict()["prompts"]["hedged_claim"] == toy_hash
    assert schema_hash() != "fbc716c3"  # its response contract is part of the schema hash


def test_a_thresholds_file_may_guard_a_new_decision_with_its_own_labels(toy):
    data = ThresholdsFile(judge="j", metric="kappa", decisions={
        "hedged_claim": {"verdict": "not_hedged", "threshold": 0.8}})
    assert to_thresholds(data).rules == (DecisionThreshold("hedged_claim", False, 0.8),)
    wrong = ThresholdsFile(judge="j", metric="kappa", decisions={"hedged_claim": {"verdict": "yes", "threshold": 0.8}})
    with pytest.raises(InputError, match="'yes' is not one of hedged, not_hedged"):
        to_thresholds(wrong)


def test_the_view_shows_a_new_decisions_question(toy):
    record = DecisionRecord(decision="hedged_claim", verdict=True)
    assert _decision_view(record, _DocumentCache(None), {}).question == "Does it hedge its claim?"


def test_the_asker_sends_a_new_decisions_prompt_and_response_model(toy):
    module, prompts = toy
    prepared = module.prepare_for(SentenceCase(REQUEST, SENTENCE, [SENTENCE], None, {}, PassagePolicy()))
    messages, response_model, contract = question(prepared, prompts)
    assert response_model is module.HedgedClaim and contract == contract_hash(module.HedgedClaim)
    assert "hedge its claim" in messages[1]["content"] and SENTENCE.text in messages[1]["content"]
    assert verdict_values("hedged_claim") == (True, False)  # its confidence is read from its verdict field


def test_the_walker_fills_a_new_decisions_prompt_from_its_module(toy):
    module, _prompts = toy

    class Capture:
        async def ask(self, prepared):
            return prepared

    case = SentenceCase(REQUEST, SENTENCE, [SENTENCE], None, {}, PassagePolicy())
    prepared = asyncio.run(LLMOracle(Capture(), case).decide(Question("hedged_claim")))  # type: ignore[arg-type]
    assert prepared == module.prepare_for(case)


def test_every_decision_module_of_the_package_is_in_the_registry():
    package = Path(decisions.__file__).parent
    declaring = set()
    for info in pkgutil.iter_modules([str(package)]):
        module = importlib.import_module(f"{decisions.__name__}.{info.name}")
        if isinstance(getattr(module, "DECISION", None), DecisionSpec):
            declaring.add(module.DECISION.name)
    assert declaring == set(REGISTRY.names)


def test_the_documentation_table_is_the_registry():
    page = (Path(__file__).parents[1] / "docs" / "decisions.md").read_text(encoding="utf-8")
    rows = [[cell.strip().strip("`") for cell in line.strip("|").split("|")]
            for line in page.splitlines() if line.startswith("| `")]
    table = [row for row in rows if len(row) == 6]
    assert table == [[spec.name, spec.abbreviation, f"prompts/{spec.prompt}.md", " / ".join(spec.labels),
                      "yes" if spec.takes_threshold else "no", spec.question] for spec in REGISTRY]
