"""Panels of judges: the vote per decision, every judge's record kept, one cache entry per judge, the agreement
among the judges (checked against independent references), the signature, and a whole run judged by a panel."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from judge.errors import SettingError
from judge.formats.judgments import DecisionRecord, EarnedAnswer, ReportJudgment, SentenceJudgment
from judge.judging.decisions.base import Prepared
from judge.judging.panel import PanelDecider, carried, open_panel, panel_record, vote_on
from judge.judging.signature import JudgeSignature
from judge.llm.cache.store import open_decision_cache
from judge.llm.panel import PanelMember, check_panel
from judge.metrics.panel_agreement import (
    agreement_of,
    cohen_kappa_pair,
    fleiss_kappa,
    krippendorff_alpha_nominal,
    panel_agreement,
)
from judge.metrics.undefined import Undefined
from judge.run.evaluate import evaluate
from judge.run.outputs import write_outputs
from judge.run.spec import EvalSpec
from judge.settings import JudgeSettings, ModelSettings, RetryPolicy
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder
from tests.test_eval_e2e import load_inputs, one_report

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"


def record(decision: str, verdict: bool | None, judge: str = "m", matches=(), error=None) -> DecisionRecord:
    return DecisionRecord(decision=decision, verdict=verdict, judge=judge, matches=list(matches), error=error,
                          rationale=f"{judge} says {verdict}")


# -- the vote -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("verdicts", "vote", "expected"), [
    ((True, True, False), "majority", True),
    ((True, False, False), "majority", False),
    ((True, False), "majority", False),           # a tie is not a majority: the negative verdict
    ((True, None, None), "majority", True),       # abstentions do not count against
    ((True, False, False), "any", True),
    ((False, False, None), "any", False),
    ((True, True, True), "unanimous", True),
    ((True, True, False), "unanimous", False),
    ((True, True, None), "unanimous", False),      # an abstention blocks unanimity
    ((None, None, None), "majority", None),        # nobody decided: nor does the panel
    ((None, None), "any", None),
])
def test_vote_on_a_yes_no_decision(verdicts, vote, expected):
    records = [record("supports_citation", v, f"j{i}") for i, v in enumerate(verdicts)]
    assert vote_on(records, vote) == (expected, [])


def test_answers_are_voted_one_by_one_and_the_verdict_is_whether_any_is_earned():
    a1, a2, a3 = (EarnedAnswer(nugget_id="n1", answer=t) for t in ("x", "y", "z"))
    records = [record("answers_nugget", True, "j0", [a1, a2]), record("answers_nugget", True, "j1", [a1]),
               record("answers_nugget", True, "j2", [a3])]
    assert vote_on(records, "majority") == (True, [a1])
    assert vote_on(records, "any") == (True, [a1, a2, a3])
    assert vote_on(records, "unanimous") == (False, [])
    # Three judges each match a different answer: each says yes, but no answer has a majority.
    split = [record("answers_nugget", True, f"j{i}", [a]) for i, a in enumerate((a1, a2, a3))]
    assert vote_on(split, "majority") == (False, [])


def test_absence_labels_are_voted_like_answers():
    n1, n2 = EarnedAnswer(nugget_id="abs-1"), EarnedAnswer(nugget_id="abs-2")
    records = [record("absence_nugget", True, "j0", [n1]), record("absence_nugget", False, "j1"),
               record("absence_nugget", True, "j2", [n1])]
    assert vote_on(records, "majority") == (True, [n1])
    assert vote_on(records, "unanimous") == (False, [])
    records[2] = record("absence_nugget", True, "j2", [n2])
    assert vote_on(records, "majority") == (False, [])
    assert vote_on(records, "any") == (True, [n1, n2])


def test_carried_majority_counts_only_the_verdicts_given():
    assert carried(2, 1, 5, "majority") and not carried(2, 2, 4, "majority")
    assert carried(1, 0, 3, "any") and not carried(0, 3, 3, "any")
    assert carried(3, 0, 3, "unanimous") and not carried(2, 0, 3, "unanimous")


def test_panel_record_keeps_every_judge_and_speaks_with_a_judge_of_the_vote():
    records = [record("supports_citation", False, "a"), record("supports_citation", True, "b"),
               record("supports_citation", True, "c")]
    voted = panel_record(records, "majority", "panel:majority:a+b+c")
    assert voted.verdict is True and voted.judge == "panel:majority:a+b+c"
    assert voted.rationale == "b says True"
    assert [r.judge for r in voted.panel] == ["a", "b", "c"]
    failed = panel_record([record("supports_citation", None, "a", error="timeout"),
                           record("supports_citation", None, "b", error="refused")], "any", "p")
    assert failed.verdict is None and failed.error == "every judge of the panel failed: a: timeout; b: refused"


def test_a_single_judges_record_has_no_panel_key_and_a_panel_record_round_trips():
    single = record("supports_citation", True)
    assert "panel" not in json.loads(single.model_dump_json())
    voted = panel_record([record("supports_citation", True, "a"), record("supports_citation", False, "b")],
                         "majority", "p")
    again = DecisionRecord.model_validate_json(voted.model_dump_json())
    assert again == voted and [r.verdict for r in again.panel] == [True, False]
    assert "panel" not in json.loads(again.model_dump_json())["panel"][0]


def test_a_panel_needs_two_distinct_judges_and_a_known_vote(tmp_path):
    model = ModelSettings("openai/a")
    with pytest.raises(SettingError, match="at least two judges"):
        check_panel([PanelMember(model)])
    with pytest.raises(SettingError, match="twice"):
        check_panel([PanelMember(model), PanelMember(model)])
    with pytest.raises(SettingError, match="same name"):
        check_panel([PanelMember(model, tmp_path / "x" / "p"), PanelMember(model, tmp_path / "y" / "p")])
    with pytest.raises(SettingError, match="choose majority, unanimous, any"):
        PanelDecider([PanelMember(model), PanelMember(ModelSettings("openai/b"))], [None, None], "most")


# -- asking: concurrently, one cache entry per judge ---------------------------------------------------------

def variant(tmp_path: Path, name: str) -> Path:
    """A copy of the shipped prompts whose supports_citation prompt says one more line."""
    folder = tmp_path / name
    shutil.copytree(PROMPTS, folder)
    path = folder / "supports_citation.md"
    path.write_text(path.read_text(encoding="utf-8").replace("## User\n", f"## User\n({name})\n"), encoding="utf-8")
    return folder


def support_question(claim: str) -> Prepared:
    from judge.judging.decisions import supports_citation
    from judge.judging.passages import PassagePolicy
    from judge.types import Document, Request

    return supports_citation.prepare(Request(request_id="r", problem_statement="p"), claim,
                                     [Document(doc_id="d1", text="The bridge opened in 1932 in Sydney.")],
                                     PassagePolicy())


def test_adding_a_fourth_judge_asks_only_the_fourth(tmp_path):
    claims = ["The bridge opened in 1932.", "The bridge is in Sydney.", "The bridge opened in 1950."]
    with FakeEndpoint(smart_responder) as ep:
        def member(name: str, prompts: Path | None = None) -> PanelMember:
            return PanelMember(ModelSettings(f"openai/{name}", ep.api_base, "x"), prompts)

        three = [member("a"), member("b"), member("a", variant(tmp_path, "v1"))]
        four = [*three, member("a", variant(tmp_path, "v2"))]

        async def ask(members: list[PanelMember]) -> list[DecisionRecord]:
            panel = open_panel(members, "majority", JudgeSettings(thresholds=None), cache)
            return await asyncio.gather(*(panel.ask(support_question(c)) for c in claims))

        cache = open_decision_cache(tmp_path / "cache")
        try:
            first = asyncio.run(ask(three))
            assert ep.calls == 3 * len(claims)
            second = asyncio.run(ask(four))
        finally:
            cache.close()
        assert ep.calls == 4 * len(claims)  # only the fourth judge was asked: the first three came from the cache
        asked_last = ep.requests[-len(claims):]
        assert all("(v2)" in r["messages"][-1]["content"] for r in asked_last)
    assert [[p.model_dump_json() for p in r.panel[:3]] for r in second] == \
        [[p.model_dump_json() for p in r.panel] for r in first]
    assert all(len(r.panel) == 4 and not r.panel[3].cached and all(p.cached for p in r.panel[:3]) for r in second)
    assert [p.judge for p in second[0].panel] == ["openai/a", "openai/b", "openai/a@v1", "openai/a@v2"]


def test_a_judge_whose_server_is_given_up_on_stops_the_panel_named(tmp_path):
    with FakeEndpoint(smart_responder) as ep:
        members = [PanelMember(ModelSettings("openai/a", ep.api_base, "x")),
                   PanelMember(ModelSettings("openai/b", "http://127.0.0.1:9/v1", "x", timeout=1.0))]
        panel = open_panel(members, "majority", JudgeSettings(thresholds=None), None,
                           retry=RetryPolicy(transport_attempts=1, give_up_after=1, wait_multiplier=0.01,
                                             wait_max=0.05))
        voted = asyncio.run(panel.ask(support_question("The bridge opened in 1932.")))
    assert voted.panel[0].verdict is not None and voted.panel[1].verdict is None
    assert voted.verdict == voted.panel[0].verdict  # the judge that answered carries a majority of one
    assert panel.usage.stopped.startswith("panel judge openai/b: gave up on http://127.0.0.1:9/v1")


# -- agreement among the judges, against independent references ----------------------------------------------

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the nominal example with missing values:
# four observers, twelve units, alpha = 0.743.
KRIPPENDORFF_2011 = [
    [1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4], [4, 4, 4, 4],
    [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5], [None, None, 1, 1], [None, 3, None, None],
]

# Fleiss (1971) as Wikipedia's "Fleiss' kappa" worked example: 10 subjects, 14 raters, 5 categories; kappa 0.210.
FLEISS_COUNTS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def test_krippendorff_alpha_matches_krippendorffs_worked_example():
    assert krippendorff_alpha_nominal(KRIPPENDORFF_2011) == pytest.approx(0.743, abs=5e-4)


def test_fleiss_kappa_matches_the_worked_example_and_statsmodels():
    units = [[c for c, n in enumerate(row) for _ in range(n)] for row in FLEISS_COUNTS]
    assert fleiss_kappa(units) == pytest.approx(0.210, abs=5e-4)
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, size=(40, 4))
    labels[:20, 1] = labels[:20, 0]  # some agreement beyond chance
    table, _ = inter_rater.aggregate_raters(labels)
    assert fleiss_kappa(labels.tolist()) == pytest.approx(inter_rater.fleiss_kappa(table), abs=1e-12)


def test_pairwise_cohen_kappa_matches_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    a = [True, True, False, True, False, False, True, None, True]
    b = [True, False, False, True, False, True, True, True, None]
    kappa, n = cohen_kappa_pair(a, b)
    both = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    assert n == len(both) == 7
    assert kappa == pytest.approx(metrics.cohen_kappa_score([x for x, _ in both], [y for _, y in both]))


def test_agreement_that_the_data_cannot_give_is_undefined_with_a_reason():
    with pytest.raises(Undefined, match="every verdict the same"):
        fleiss_kappa([[True, True], [True, True]])
    result = agreement_of(["a", "b"], [[True, None], [None, False]])
    assert result.fleiss_kappa is None
    assert result.undefined["fleiss_kappa"] == "no decision every judge gave a verdict on"
    assert result.krippendorff_alpha is None and result.pairwise[0].kappa is None
    assert result.pairwise[0].why("kappa") == "no decision both judges gave a verdict on"


def test_panel_agreement_is_read_from_the_judgments():
    def sentence(index: int, verdicts: list[bool]) -> SentenceJudgment:
        voted = panel_record([record("supports_citation", v, j) for v, j in zip(verdicts, "abc", strict=True)],
                             "majority", "panel:majority:a+b+c")
        return SentenceJudgment(index=index, text="s", decisions=[voted])

    rows = [[True, True, True], [True, False, True], [False, False, False], [True, True, False]]
    judgment = ReportJudgment(run_id="r", request_id="q", sentences=[sentence(i, v) for i, v in enumerate(rows)])
    summary = panel_agreement([judgment])
    assert summary.judges == ["a", "b", "c"] and summary.judge == "panel:majority:a+b+c"
    agreement = summary.agreement["supports_citation"]
    assert (agreement.decisions, agreement.complete, agreement.split) == (4, 4, 2)
    assert agreement.fleiss_kappa == pytest.approx(fleiss_kappa(rows))
    assert panel_agreement([ReportJudgment(run_id="r", request_id="q", sentences=[])]) is None


# -- the signature ------------------------------------------------------------------------------------------

def test_the_signature_lists_the_panel_and_the_vote_and_a_single_judges_is_unchanged(tmp_path):
    model, retry, settings = ModelSettings("openai/a"), RetryPolicy(), JudgeSettings()
    single = JudgeSignature.of(model, retry, settings)
    assert "panel" not in single.short() and "vote" not in single.as_dict()
    members = [PanelMember(model), PanelMember(ModelSettings("openai/b")),
               PanelMember(model, variant(tmp_path, "v1"))]
    signed = JudgeSignature.of(model, retry, settings, panel=members, vote="unanimous")
    assert signed.short().startswith(single.short() + "|panel:openai/a+openai/b+openai/a@")
    assert signed.short().endswith("|vote:unanimous")
    assert signed.as_dict()["panel"][:2] == ["openai/a", "openai/b"]
    edited = variant(tmp_path / "o", "v1")
    (edited / "supports_citation.md").write_text((edited / "supports_citation.md").read_text() + "Be brief.\n")
    other = JudgeSignature.of(model, retry, settings, panel=[*members[:2], PanelMember(model, edited)])
    assert other.panel[2] != signed.panel[2]  # same directory name, other prompts: another judge


# -- a whole run judged by a panel -----------------------------------------------------------------------------

def test_a_run_judged_by_a_panel_keeps_every_judge_and_reports_their_agreement(tmp_path):
    with FakeEndpoint(smart_responder) as ep:
        models = [ModelSettings(f"openai/{n}", ep.api_base, "x") for n in ("a", "b", "c")]
        config = EvalSpec.of(model=models[0], thresholds=None, cache=tmp_path / "cache",
                             panel=tuple(PanelMember(m) for m in models))
        evaluation = evaluate(load_inputs(tmp_path, [one_report(tmp_path)]), config)
        models_asked = {r["model"] for r in ep.requests}
    assert models_asked == {"a", "b", "c"}
    records = [d for j in evaluation.judgments for s in j.sentences for d in s.decisions if d.judge != "argue-judge"]
    assert records and all(d.judge == "panel:majority:openai/a+openai/b+openai/c" for d in records)
    assert all([p.judge for p in d.panel] == ["openai/a", "openai/b", "openai/c"] for d in records)
    assert evaluation.usage.model_calls == 3 * len(records)
    paths = write_outputs(evaluation, tmp_path / "out")
    summary = json.loads(paths["run-summary.json"].read_text(encoding="utf-8"))["run"]["panel"]
    assert summary["judges"] == ["openai/a", "openai/b", "openai/c"]
    # The three judges answer alike (one responder): they agree on every decision they were asked.
    support = summary["agreement"]["supports_citation"]
    assert support["split"] == 0 and support["decisions"] > 0
    written = [d for line in paths["judgments.jsonl"].read_text(encoding="utf-8").splitlines()
               for s in json.loads(line)["sentences"] for d in s["decisions"] if d["judge"] != "argue-judge"]
    assert len(written) == len(records) and all(len(d["panel"]) == 3 for d in written)


# -- calibrate with a panel -------------------------------------------------------------------------------------

ATTRIBUTIONBENCH = Path(__import__("os").environ.get("ARGUE_SHARED_DATA", Path(__file__).resolve().parents[2]
                                                     / "shared" / "data")) / "attributionbench" / "dev.jsonl"


def test_calibrate_reports_each_judge_and_the_panel_against_the_human_labels(tmp_path):
    import judge

    if not ATTRIBUTIONBENCH.is_file():
        pytest.skip("the shared AttributionBench dev file is not here (set ARGUE_SHARED_DATA)")
    no = {"verdict": "not_supported", "evidence": [], "rationale": "no"}
    with FakeEndpoint(smart_responder) as ep:
        ep.on("SupportsCitation", lambda request: no if request["model"] == "c" else smart_responder(request))
        members = [PanelMember(ModelSettings(f"openai/{n}", ep.api_base, "x")) for n in ("a", "b", "c")]
        results = judge.calibrate(attributionbench=ATTRIBUTIONBENCH, sample="12", panel=members, vote="any",
                                  cache=tmp_path / "cache", n_boot=50, judge=JudgeSettings(thresholds=None))
    assert set(results.judges) == {"openai/a", "openai/b", "openai/c"}
    labels = {name: r["supports_citation"].confusion for name, r in results.judges.items()}
    assert labels["openai/a"] == labels["openai/b"]
    # judge c always says no: with 'any' the panel says what a and b say
    assert results.judges["openai/c"]["supports_citation"].confusion[0][0] == 0
    assert results.decisions["supports_citation"].confusion == labels["openai/a"]
    among = results.panel["supports_citation"]
    assert among.decisions == 12 and among.judges == ["openai/a", "openai/b", "openai/c"]
    assert "panel:openai/a+openai/b+openai/c|vote:any" in results.signature


def test_calibrate_refuses_a_vote_without_a_panel_and_what_a_panel_cannot_take():
    import judge

    with pytest.raises(SettingError, match="vote applies to a panel"):
        judge.calibrate(attributionbench=ATTRIBUTIONBENCH, vote="any", cache=None)
    members = [PanelMember(ModelSettings("openai/a")), PanelMember(ModelSettings("openai/b"))]
    with pytest.raises(SettingError, match="fit_metric"):
        judge.calibrate(attributionbench=ATTRIBUTIONBENCH, panel=members, fit_metric="kappa", cache=None)
    with pytest.raises(SettingError, match="model: a panel names each judge's model"):
        judge.calibrate(attributionbench=ATTRIBUTIONBENCH, panel=members, model="openai/x", cache=None)


def test_calibrate_cli_takes_a_panel_judge_by_judge(tmp_path):
    from typer.testing import CliRunner

    from judge.cli.app import app

    if not ATTRIBUTIONBENCH.is_file():
        pytest.skip("the shared AttributionBench dev file is not here (set ARGUE_SHARED_DATA)")
    runner = CliRunner()
    refused = runner.invoke(app, ["calibrate", "--attributionbench", str(ATTRIBUTIONBENCH), "--vote", "any"])
    assert refused.exit_code != 0 and "--vote applies to a panel" in refused.output
    with FakeEndpoint(smart_responder) as ep:
        result = runner.invoke(app, [
            "calibrate", "--attributionbench", str(ATTRIBUTIONBENCH), "--sample", "6", "--n-boot", "20",
            "--panel-judge", "openai/a", "--panel-judge", f"openai/b,prompts={variant(tmp_path, 'v1')}",
            "--api-base", ep.api_base, "--api-key", "x", "--vote", "unanimous", "--thresholds", "none",
            "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "out"), "--no-plots"])
        models = {r["model"] for r in ep.requests}
    assert result.exit_code == 0, result.output
    assert models == {"a", "b"}
    assert "supports_citation, judge openai/b@v1: n=6" in result.output
    assert "among the judges: Fleiss' kappa=" in result.output
    report = (tmp_path / "out" / "calibration.md").read_text(encoding="utf-8")
    assert "## Panel of judges" in report and "supports_citation: openai/b@v1" in report


# -- the HTML view shows where the judges disagree --------------------------------------------------------------

def test_the_view_shows_each_judge_and_marks_where_they_disagree(tmp_path):
    from judge.view.render import write_view

    def sentence(index: int, verdicts: tuple[bool, ...]) -> SentenceJudgment:
        judged = [record("needs_citation", v, j) for v, j in zip(verdicts, ("ja", "jb", "jc"), strict=True)]
        voted = panel_record(judged, "majority", "panel:majority:ja+jb+jc")
        return SentenceJudgment(index=index, text=f"Sentence {index}.", decisions=[voted])

    judgment = ReportJudgment(run_id="run", request_id="q1",
                              sentences=[sentence(0, (True, True, True)), sentence(1, (False, True, False))])
    files = write_view([judgment], tmp_path / "view")
    page = next(p for p in files.pages if "q1" in p.name).read_text(encoding="utf-8")
    assert page.count('class="split-badge">the judges disagree') == 1   # sentence 1 only
    assert page.count(">judges split</span>") == 1
    assert page.count('<table class="panel">') == 2
    assert "<code>jb</code>" in page and "jb says True" in page


def test_eval_prints_the_agreement_among_the_judges_and_nothing_for_a_single_judge():
    from judge.cli.render import console, print_panel
    from judge.run.outputs import panel_summary

    rows = [[True, True, False], [True, False, False], [False, False, False]]
    sentences = [SentenceJudgment(index=i, text="s", decisions=[panel_record(
        [record("supports_citation", v, j) for v, j in zip(row, "abc", strict=True)], "majority", "panel:x")])
        for i, row in enumerate(rows)]
    summary = panel_summary([ReportJudgment(run_id="r", request_id="q", sentences=sentences)])
    with console.capture() as captured:
        print_panel(summary)
        print_panel(None)
    text = captured.get()
    assert "agreement among the judges of panel:x" in text
    assert f"{fleiss_kappa(rows):.3f}" in text and "a / b" in text
    assert panel_summary([ReportJudgment(run_id="r", request_id="q", sentences=[
        SentenceJudgment(index=0, text="s", decisions=[record("supports_citation", True)])])]) is None


def test_eval_with_two_models_judges_with_the_panel_and_prints_their_agreement(tmp_path):
    """`argue-judge eval --model A --model B --vote unanimous`: both judges answer, every decision record keeps
    both, run-summary.json has the agreement, the signature the panel and the vote, and the table is printed."""
    from typer.testing import CliRunner

    from judge.cli.app import app

    examples = Path(__file__).resolve().parents[1] / "examples"
    out = tmp_path / "out"
    with FakeEndpoint(smart_responder) as ep:
        result = CliRunner().invoke(app, [
            "eval", str(examples / "reports"), "--requests", str(examples / "requests.jsonl"), "--docs",
            str(examples / "docs.jsonl"), "--nuggets", str(examples / "nuggets"), "--model", "openai/a", "--model",
            "openai/b", "--vote", "unanimous", "--api-base", ep.api_base, "--api-key", "x", "--no-cache",
            "--out", str(out)])
        asked = {r["model"] for r in ep.requests}
    assert result.exit_code == 0, result.output
    assert asked == {"a", "b"}
    assert "a panel of 2 judges (openai/a, openai/b; vote unanimous)" in " ".join(result.output.split())
    assert "agreement among the judges of panel:unanimous:openai/a+openai/b" in " ".join(result.output.split())
    summary = json.loads((out / "run-summary.json").read_text(encoding="utf-8"))
    assert summary["run"]["panel"]["judges"] == ["openai/a", "openai/b"]
    assert "|panel:openai/a+openai/b|vote:unanimous|" in summary["score_signature"]
    records = [d for line in (out / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
               for s in json.loads(line)["sentences"] for d in s["decisions"] if d["judge"].startswith("panel:")]
    assert records and all([p["judge"] for p in d["panel"]] == ["openai/a", "openai/b"] for d in records)
