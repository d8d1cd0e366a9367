"""A decision is one module plus its row in the flowchart's table: the registry is built from the modules the table
names, and it is where every per-decision lookup goes, so a new decision module (a toy one here,
tests/data/toy_decision/, not shipped) is picked up by the signature, the thresholds file, the view, the asker, the
walker and the judgments reader without an edit anywhere else."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import pkgutil
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from judge.chart import CHART, DRAFT_NUGGETS, NUGGET_QUESTIONS, SUPPORTS_CITATION
from judge.errors import InputError
from judge.formats.judgments import DecisionRecord, ReportJudgment, SentenceJudgment, iter_judgment_lines
from judge.judging import decisions
from judge.judging.decisions import (
    NUGGET_REGISTRY,
    REGISTRY,
    Registry,
    claims_absence,
    draft_nuggets,
    needs_citation,
    spec_of,
)
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
from tests.test_docs import load_hook

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


def test_the_registry_is_the_flowchart_tables_diamonds_in_the_order_of_its_rows():
    assert REGISTRY.names == DIAMONDS == tuple(d.decision for d in CHART.diamonds)
    assert DIAMONDS[0] == SUPPORTS_CITATION  # the signature's `prompts:sc=...` starts with it


def test_each_decision_names_its_response_model_after_itself():
    """The fake judge finds a decision's row of the table by the schema its request carries (the response model's
    class name), so a decision's model is its name in CamelCase (judge.testing.responders.decision_of)."""
    from judge.testing.responders import decision_of

    for spec in [*REGISTRY, *NUGGET_REGISTRY, load_toy().DECISION]:
        assert decision_of(spec.response_model.__name__) == spec.name


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


def shown_signatures() -> list[str]:
    """The judge signatures the README and docs/outputs.md show as `eval` prints them."""
    root = Path(__file__).parents[1]
    texts = [(root / name).read_text(encoding="utf-8") for name in ("README.md", "docs/outputs.md")]
    return [line.split("signature: ")[-1] for text in texts for line in text.splitlines()
            if line.removeprefix("signature: ").startswith("argue-judge:")]


def test_the_shipped_declarations_sign_as_the_readme_shows():
    """The `prompts:` and `schema:` fields the README and outputs.md show are the shipped registry's (derived from
    the pages, so a new shipped decision is checked against the pages it must update, with no list here)."""
    signatures = shown_signatures()
    assert len(signatures) >= 2
    for signature in signatures:
        fields = dict(part.partition(":")[::2] for part in signature.split("|"))
        assert fields["prompts"] == prompts_tag(prompt_hashes(None))
        assert fields["schema"] == schema_hash()
    assert prompts_tag(prompt_hashes(None)) == "+".join(f"{spec.abbreviation}={spec.template().short_hash}"
                                                        for spec in REGISTRY)


def test_every_decision_names_its_own_prompt_file():
    for spec in [*REGISTRY, *NUGGET_REGISTRY]:
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
    shipped = "+".join(f"{spec.abbreviation}={spec.template().short_hash}" for spec in REGISTRY)
    assert f"|prompts:{shipped}+hc={toy_hash}|" in signature.short()
    assert signature.as_dict()["prompts"]["hedged_claim"] == toy_hash


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
    assert declaring == set(REGISTRY.names) | set(NUGGET_REGISTRY.names)
    assert not set(REGISTRY.names) & set(NUGGET_REGISTRY.names)


def test_nugget_questions_are_registered_as_the_diamonds_are_but_never_walked():
    """One kind of declaration, two registries built the same way: the nugget commands' questions are found by
    their names in the chart, declare no `prepare_for` (nothing walks them) and no threshold may flip them."""
    assert NUGGET_REGISTRY.names == NUGGET_QUESTIONS
    assert all(spec.in_flowchart for spec in REGISTRY) and not any(spec.in_flowchart for spec in NUGGET_REGISTRY)
    assert not any(spec.takes_threshold for spec in NUGGET_REGISTRY)
    # document_relevance has a verdict field (its confidence is read), yet no threshold may flip it
    assert spec_of("document_relevance").response_model.verdict_field == "relevance"
    for name in (*REGISTRY.names, *NUGGET_REGISTRY.names):
        assert spec_of(name).name == name
    with pytest.raises(KeyError, match="unknown decision 'hedged_claim'; known: supports_citation, .*draft_nuggets"):
        spec_of("hedged_claim")
    with pytest.raises(ValueError, match="draft_nuggets: a diamond of the flowchart declares how the walker fills"):
        Registry.of_package(decisions.__name__, [DRAFT_NUGGETS])
    with pytest.raises(ValueError, match="needs_citation: a question outside the flowchart declares no prepare_for"):
        Registry.of_package(decisions.__name__, ["needs_citation"], flowchart=False)


def test_the_one_asker_asks_a_nugget_question_as_it_asks_a_diamond():
    """The Decider renders a nugget question's template, sends its response model with its contract hash, and
    returns the validated response beside the record (the nugget commands read the drafted nuggets from it)."""
    from judge.judging.decisions.asker import Decider
    from judge.llm.client import Answered
    from judge.types import Document

    sent = []

    class Scripted:
        settings = ModelSettings("scripted/judge")

        async def ask(self, messages, response_model, context, contract=""):
            sent.append((messages, response_model, contract))
            return Answered(response_model(rationale="r", nuggets=[]), None, cached=True)

    prepared = draft_nuggets.prepare(REQUEST, Document(doc_id="d1", text="The port doubled its traffic."), 3)
    asked = asyncio.run(Decider(Scripted()).answer(prepared))  # type: ignore[arg-type]
    [(messages, response_model, contract)] = sent
    assert (messages, response_model, contract) == question(prepared)
    assert issubclass(response_model, draft_nuggets.DraftNuggets)  # tailored to the prompt's rationale option
    assert contract == contract_hash(draft_nuggets.DraftNuggets)
    assert "The port doubled its traffic." in messages[1]["content"]
    assert isinstance(asked.response, draft_nuggets.DraftNuggets) and asked.response.nuggets == []
    assert asked.record.decision == DRAFT_NUGGETS and asked.record.verdict is False and asked.record.cached
    assert asked.record.prompt_hash == spec_of(DRAFT_NUGGETS).template().short_hash


def load_decision_table() -> ModuleType:
    """docs/hooks/decision_table.py loaded as MkDocs 1.6 loads a hook (tests.test_docs.load_hook)."""
    return load_hook("decision_table")


def table_rows(markdown: str) -> list[list[str]]:
    rows = [[cell.strip().strip("`") for cell in line.strip("|").split("|")]
            for line in markdown.splitlines() if line.startswith("| `")]
    return [row for row in rows if len(row) == 6]


def registry_rows(registry: Registry) -> list[list[str]]:
    return [[spec.name, spec.abbreviation, f"prompts/{spec.prompt}.md", " / ".join(spec.labels),
             "yes" if spec.takes_threshold else "no", spec.question] for spec in registry]


def test_the_documentation_table_is_generated_from_the_registry_at_its_marker():
    from mkdocs.exceptions import PluginError

    hook = load_decision_table()
    page_text = (Path(__file__).parents[1] / "docs" / hook.PAGE).read_text(encoding="utf-8")
    assert hook.MARKER in page_text and not table_rows(page_text)  # no hand-written copy to go stale

    class Page:
        class file:  # noqa: N801 (MkDocs' page.file.src_uri)
            src_uri = hook.PAGE

    built = hook.on_page_markdown(page_text, Page, None, None)
    assert hook.MARKER not in built and hook.NUGGET_MARKER not in built
    assert table_rows(built) == registry_rows(REGISTRY) + registry_rows(NUGGET_REGISTRY)
    with pytest.raises(PluginError, match="docs/decisions.md lost its marker .*the generated decision table"):
        hook.on_page_markdown("# Decisions, marker gone\n", Page, None, None)
    with pytest.raises(PluginError, match="lost its marker <!-- nugget-decision-table -->"):
        hook.on_page_markdown(hook.MARKER, Page, None, None)


def test_the_smart_fake_judge_has_rules_for_registered_decisions_only_and_answers_a_new_one_validly(toy):
    """Its rules are keyed by response-model names: each is a shipped decision's (or the benchmarks' legacy
    layout's), and a decision without a rule, such as the toy, gets a valid minimal instance of its schema."""
    from judge.testing.responders import SMART, smart_responder

    assert set(SMART) - {"LegacySupportsCitation"} == {spec.response_model.__name__ for spec in REGISTRY}
    module, _prompts = toy
    schema = module.HedgedClaim.model_json_schema()
    request = {"messages": [{"role": "user", "content": "x"}],
               "response_format": {"type": "json_schema", "json_schema": {"name": "HedgedClaim", "schema": schema}}}
    answer = smart_responder(request)
    assert module.HedgedClaim.model_validate(answer).decided() is False


@pytest.mark.parametrize(("unasked", "decided"), [("yes", True), ("no", False)])
def test_the_fake_judges_answer_to_a_decision_without_a_rule_is_the_tables(unasked, decided):
    """A decision the fake judge has no rule for is answered as its row declares for a judge that does not ask it
    (`unasked`), in a valid instance of the schema its request carries."""
    import dataclasses

    from judge.chart import REPEATED_CLAIM, Diamond
    from judge.testing.responders import unasked_answer

    toy = load_toy()
    row = Diamond("hedged_claim", yes=5, no=5, says=("", ""), unasked=unasked)
    chart = dataclasses.replace(CHART, diamonds=tuple(
        dataclasses.replace(d, no="hedged_claim") if d.decision == REPEATED_CLAIM else d for d in CHART.diamonds)
        + (row,))
    schema = toy.HedgedClaim.model_json_schema()
    request = {"messages": [{"role": "user", "content": "x"}],
               "response_format": {"type": "json_schema", "json_schema": {"name": "HedgedClaim", "schema": schema}}}
    assert toy.HedgedClaim.model_validate(unasked_answer(request, chart)).decided() is decided
    # not in the table (the shipped one): the bare minimal instance
    assert toy.HedgedClaim.model_validate(unasked_answer(request)).decided() is False
