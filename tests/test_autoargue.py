"""Auto-ARGUE's measures and judgments format: hand-computed cases, and fidelity to Auto-ARGUE's own scores of the
NeuCLIR 2024 example run (../shared/data, skipped with a reason when that directory is absent)."""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from pathlib import Path

import pytest

from judge.adapters.autoargue import read_any_judgments, read_auto_argue, to_auto_argue, write_auto_argue
from judge.errors import InputError
from judge.formats import read_nugget_banks
from judge.formats.judgments import DecisionRecord, EarnedAnswer, ReportJudgment, SentenceJudgment, nugget_summaries
from judge.formats.scores import read_scores
from judge.metrics import AUTO_ARGUE_MEASURES, F1, parse_measure, score_judgments, score_report
from judge.types import Answer, Nugget, NuggetBank

TOL = 1e-9
DATA = Path(os.environ.get("ARGUE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")) / "neuclir24"
RUN = DATA / "example-run"
needs_data = pytest.mark.skipif(not (RUN / "auto-argue-scores.tsv").is_file(),
                                reason=f"shared data not found at {DATA} (the fidelity test reads Auto-ARGUE's "
                                       "judgments and scores of the NeuCLIR example run from there)")
TOPICS = ("300", "303", "308", "309", "310", "334", "335", "343", "351")


# ------------------------------------------------------------------------------------------ hand-computed

def bank() -> NuggetBank:
    return NuggetBank(request_id="q1", nuggets=(
        Nugget(nugget_id="n1", question="Q1?", importance="vital",
               answers=(Answer(text="a", doc_ids=("d1",)), Answer(text="b"))),          # b: no references
        Nugget(nugget_id="n2", question="Q2?", aggregator="AND",
               answers=(Answer(text="c", doc_ids=("d2",)), Answer(text="d", doc_ids=("d3",)))),
        Nugget(nugget_id="n3", question="Q3?", answers=(Answer(text="e"),)),            # dropped: no references
        Nugget(nugget_id="n4", question="Q4?", answers=(Answer(text="f", doc_ids=("d4",)),)),
    ))


def supports(doc: str, verdict: bool) -> DecisionRecord:
    return DecisionRecord(decision="supports_citation", verdict=verdict, doc_ids=[doc])


def answers(doc: str, *matches: tuple[str, str]) -> DecisionRecord:
    return DecisionRecord(decision="answers_nugget", verdict=bool(matches), doc_ids=[doc],
                          matches=[EarnedAnswer(nugget_id=n, answer=a) for n, a in matches])


def sentence(index: int, text: str, cites: tuple[str, ...] = (), outcome: int | None = None,
             decisions: tuple[DecisionRecord, ...] = (), earned: tuple[tuple[str, str], ...] = (),
             status: str = "judged") -> SentenceJudgment:
    return SentenceJudgment(index=index, text=text, citations=list(cites), outcome=outcome, status=status,
                            decisions=list(decisions), earned=[EarnedAnswer(nugget_id=n, answer=a) for n, a in earned])


SENTENCES = [
    # cites d1 (supports, answers n1:a) and d5 (does not support): #1, yet Auto-ARGUE credits answer a.
    sentence(0, "Alpha.", ("d1", "d5"), 1, (supports("d1", True), supports("d5", False), answers("d1", ("n1", "a")))),
    # cites d2, supported, answers n2:c (half of an AND nugget).
    sentence(1, "Beta gamma.", ("d2",), 3, (supports("d2", True), answers("d2", ("n2", "c"))), (("n2", "c"),)),
    # cites d6 (no bank answer references it): supported, answers nothing.
    sentence(2, "Delta.", ("d6",), 2, (supports("d6", True), answers("d6"))),
    sentence(3, "A new uncited claim.", outcome=5),        # needs a citation: counts in the denominator
    sentence(4, "A repeated claim.", outcome=6),           # not a first instance
    sentence(5, "In this report.", outcome=4),             # needs no citation
    sentence(6, "Cut by the limit.", ("d4",), status="truncated"),
]


def report(sentences=SENTENCES, request: str = "q1") -> ReportJudgment:
    return ReportJudgment(run_id="r", request_id=request, sentences=sentences, nuggets=nugget_summaries(bank()))


def test_every_auto_argue_measure_by_hand():
    scores = score_report(report(), bank())
    expected = {
        "sentences": 6, "character_count": len("Alpha.Beta gamma.Delta.A new uncited claim.A repeated claim."
                                               "In this report."),
        "citations": 4,                     # d1 d5 | d2 | d6
        "supporting_citations": 3,          # d1 d2 d6
        "relevant_citations": 2,            # d1 d2 are references of bank answers; d5 d6 are not
        "correctly_cited_sentences": 2,     # s1 s2 (s0 has an unsupporting citation)
        "sentences_with_citations_or_requiring_citations": 4,   # s0 s1 s2 + s3 (#5)
        "nuggets": 3, "nuggets_weighted": 4,                    # n1 (vital) n2 n4; n3 dropped
        "correct_nuggets": 1, "correct_nuggets_weighted": 2,    # n1 via s0's unsupported sentence; n2 lacks d
        "sentence_support": 2 / 4, "citation_support": 3 / 4, "citation_relevance": 2 / 4,
        "nugget_coverage": 1 / 3, "nugget_coverage_weighted": 2 / 4,
        "f1": 2 * (1 / 2) * (1 / 3) / (1 / 2 + 1 / 3), "f1_weighted": 0.5,
    }
    assert set(expected) == set(AUTO_ARGUE_MEASURES)
    for name, value in expected.items():
        assert math.isclose(scores[AUTO_ARGUE_MEASURES[name]], value, abs_tol=TOL), name
    # ARGUE's F1 is another measure: precision (#3)/(#1 #3 #5) = 1/3, recall: n2 (AND) not earned -> 0.
    assert scores[F1] == 0.0


def test_and_nugget_needs_every_referenced_answer_and_micro_pools():
    more = [*SENTENCES[:6], sentence(6, "Epsilon.", ("d3",), 3, (supports("d3", True), answers("d3", ("n2", "d"))),
                                     (("n2", "d"),))]
    second = report(more, request="q2")
    banks = {"q1": bank(), "q2": bank().model_copy(update={"request_id": "q2"})}
    run = score_judgments([report(), second], banks).runs["r"]
    q2 = run.reports["q2"]
    # n1 and now n2
    assert q2["autoargue.correct_nuggets"] == 2 and math.isclose(q2["autoargue.nugget_coverage"], 2 / 3)
    assert math.isclose(q2["autoargue.sentence_support"], 3 / 5)
    # macro = mean of per-report values; micro = pooled counts; the Auto-ARGUE _macro/_micro names parse.
    assert math.isclose(run["autoargue.sentence_support"], (2 / 4 + 3 / 5) / 2)
    assert math.isclose(run["autoargue.sentence_support_micro"], (2 + 3) / (4 + 5))
    assert math.isclose(run["autoargue.nugget_coverage(micro=True)"], (1 + 2) / (3 + 3))
    assert math.isclose(run["autoargue.f1(micro=True)"], 2 * (5 / 9) * 0.5 / (5 / 9 + 0.5))
    assert run["autoargue.citations"] == 4 + 5
    assert parse_measure("autoargue.f1_weighted_macro") == parse_measure("autoargue.f1_weighted")


def test_auto_argue_measures_are_namespaced():
    for own_name, measure in AUTO_ARGUE_MEASURES.items():
        assert measure.name == f"autoargue.{own_name}" and parse_measure(measure.name) == measure


@pytest.mark.parametrize("bare", ["f1", "f1_micro", "sentence_support", "citation_support(micro=True)",
                                  "citation_relevance", "nuggets", "nugget_coverage_weighted"])
def test_an_auto_argue_name_without_its_namespace_is_no_measure(bare):
    """Never read as the ARGUE measure of the same letters (`f1` is not `F1`): one line listing the known ones."""
    with pytest.raises(ValueError) as info:
        parse_measure(bare)
    message = str(info.value)
    assert "\n" not in message and f"in measure {bare!r}; known measures: " in message
    assert "autoargue.f1" in message


def test_the_records_own_answer_references_score_exactly_as_the_bank_does():
    own = score_judgments([report()]).runs["r"].reports["q1"]
    given = score_judgments([report()], {"q1": bank()}).runs["r"].reports["q1"]
    for name in ("citation_relevance", "relevant_citations", "nuggets", "correct_nuggets", "nugget_coverage", "f1"):
        measure = AUTO_ARGUE_MEASURES[name]
        assert own[measure] == given[measure] and not math.isnan(own[measure]), name


def test_without_the_bank_reference_measures_are_nan_and_said():
    stripped = report()
    stripped = stripped.model_copy(update={"nuggets": [n.model_copy(update={"references": None})
                                                       for n in stripped.nuggets]})
    scores = score_judgments([stripped])
    q1 = scores.runs["r"].reports["q1"]
    for name in ("citation_relevance", "relevant_citations", "nuggets", "correct_nuggets", "nugget_coverage", "f1"):
        assert math.isnan(q1[AUTO_ARGUE_MEASURES[name]]), name
    assert math.isclose(q1["autoargue.sentence_support"], 0.5)
    assert any("--nuggets DIR" in w for w in scores.warnings)


# ---------------------------------------------------------------------------------------------- format

def test_export_then_import_keeps_the_judgments(tmp_path):
    path = tmp_path / "aa.jsonl"
    write_auto_argue(path, [report()], {"q1": bank()})
    record = json.loads(path.read_text(encoding="utf-8"))
    assert len(record["judgments"]) == 6                       # the truncated sentence is not exported
    first = record["judgments"][0]
    kinds = [(j["judgment_type_id"], j["provenance"]["doc_id"]) for j in first["judgments"]]
    assert kinds == [(k, d) for d in ("d1", "d5") for k in
                     ("CITED_DOCUMENT_RELEVANCE", "SENTENCE_ANSWERS_QUESTION", "SENTENCE_ATTESTED")]
    back = read_auto_argue(path, {"q1": bank()})[0]
    assert [s.outcome for s in back.sentences[:3]] == [1, 3, 2]
    assert back.sentences[1].earned == [EarnedAnswer(nugget_id="n2", answer="c")]
    ours, theirs = score_report(report(), bank()), score_report(back, bank())
    for name in ("citation_support", "citation_relevance", "nugget_coverage", "correctly_cited_sentences"):
        assert ours[AUTO_ARGUE_MEASURES[name]] == theirs[AUTO_ARGUE_MEASURES[name]], name
    # Auto-ARGUE's judgment types for uncited sentences are not known here, so they travel without judgments and
    # come back undetermined: the #5 sentence leaves sentence_support's denominator (4 -> 3).
    assert [s.status for s in back.sentences[3:]] == ["undetermined"] * 3
    assert math.isclose(theirs["autoargue.sentence_support"], 2 / 3)


@pytest.mark.parametrize(("unasked", "outcomes", "status"), [
    (None, [1, None, 2], ["judged", "failed", "judged"]),   # the table declares no answer: the sentence fails
    ("no", [1, 3, 2], ["judged"] * 3),                       # its "no" keeps the shipped outcome
    ("yes", [1, 2, 2], ["judged"] * 3),                      # its "yes" routes the supported answer to #2
])
def test_a_decision_auto_argue_does_not_judge_takes_the_answer_the_table_declares(tmp_path, monkeypatch, unasked,
                                                                                  outcomes, status):
    """Auto-ARGUE's outcomes are the flowchart's: a row added to the table (here a diamond asked of a supported
    sentence that answers a nugget) is walked for Auto-ARGUE's judgments too, with its declared `unasked` answer."""
    import dataclasses

    from judge.chart import ANSWERS_NUGGET, CHART, Diamond
    from judge.judging import flowchart

    hedged = Diamond("hedged_claim", yes=2, no=3, says=("hedges it", "states it"), unasked=unasked)
    diamonds = tuple(dataclasses.replace(d, yes="hedged_claim") if d.decision == ANSWERS_NUGGET else d
                     for d in CHART.diamonds) + (hedged,)
    chart = dataclasses.replace(CHART, diamonds=diamonds)
    monkeypatch.setattr(flowchart, "CHART", chart)
    monkeypatch.setattr("judge.adapters.autoargue.CHART", chart)
    path = tmp_path / "aa.jsonl"
    write_auto_argue(path, [report()], {"q1": bank()})
    back = read_auto_argue(path, {"q1": bank()})[0]
    assert [s.outcome for s in back.sentences[:3]] == outcomes
    assert [s.status for s in back.sentences[:3]] == status


@pytest.mark.parametrize("change, message", [
    (lambda r: r["judgments"][0]["judgments"][0].update(judgment_type_id="SENTENCE_IS_FUNNY"),
     "judgment type 'SENTENCE_IS_FUNNY' is not read"),
    (lambda r: r["judgments"][0]["judgments"][1]["response"]["matched_nuggets"].append(
        {"question_text": "Not a bank question?", "matched_answer": ["x"]}), "is not in the nugget bank"),
    (lambda r: r["report"]["metadata"].update(topic_id="q9"), "no nugget bank for request 'q9'"),
    (lambda r: r["judgments"][0].pop("text"), "missing field 'text'"),
])
def test_bad_auto_argue_records_name_file_and_line(tmp_path, change, message):
    record = to_auto_argue(report(), bank())
    change(record)
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(to_auto_argue(report(), bank())) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message) as info:
        read_auto_argue(path, {"q1": bank()})
    assert str(info.value).startswith(f"{path}:2:")


def test_detection_needs_the_banks(tmp_path):
    path = tmp_path / "aa.jsonl"
    write_auto_argue(path, [report()], {"q1": bank()})
    with pytest.raises(InputError, match="pass the nugget banks with --nuggets"):
        read_any_judgments([path], None)
    assert read_any_judgments([path], {"q1": bank()})[0].assessor == "auto-argue"


# ----------------------------------------------------------------------- fidelity to Auto-ARGUE's scores

def auto_argue_scores() -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = defaultdict(dict)
    for line in (RUN / "auto-argue-scores.tsv").read_text(encoding="utf-8").splitlines():
        run_id, topic, metric, value = line.split("\t")
        table[topic][metric] = float(value)
    return table


@pytest.fixture(scope="module")
def example():
    banks = read_nugget_banks([DATA / "nuggets"])
    judgments = read_auto_argue(RUN / "auto-argue-judgments.jsonl", banks)
    return banks, judgments, score_judgments(judgments, banks).runs["example-run-id"]


@needs_data
@pytest.mark.parametrize("topic", TOPICS)
def test_every_auto_argue_measure_equals_auto_argues_own(example, topic):
    theirs = auto_argue_scores()
    assert sorted(theirs) == list(TOPICS)
    assert len(theirs[topic]) == 13
    ours = example[2].reports[topic]
    for metric, value in theirs[topic].items():
        mine = ours[AUTO_ARGUE_MEASURES[metric]]   # Auto-ARGUE's own name; ours is autoargue.<name>
        assert abs(mine - value) <= TOL, (topic, metric, mine, value)


@needs_data
def test_round_trip_through_our_format_gives_the_same_scores(example, tmp_path):
    banks, judgments, run = example
    exported = tmp_path / "back.jsonl"
    write_auto_argue(exported, judgments, banks)
    original = [json.loads(line) for line in (RUN / "auto-argue-judgments.jsonl").read_text().splitlines()]
    again = [json.loads(line) for line in exported.read_text().splitlines()]

    def verdicts(records):
        return [(j["judgment_type_id"], j["provenance"]["doc_id"], json.dumps(
            {k: v for k, v in j["response"].items() if k != "judgment_type_id"}, sort_keys=True))
            for r in records for s in r["judgments"] for j in s["judgments"]]

    assert verdicts(again) == verdicts(original)     # relevance regenerated from the banks, the rest kept
    rescored = score_judgments(read_auto_argue(exported, banks), banks).runs["example-run-id"]
    for topic in TOPICS:
        for name in AUTO_ARGUE_MEASURES:
            measure = AUTO_ARGUE_MEASURES[name]
            a, b = run.reports[topic][measure], rescored.reports[topic][measure]
            assert a == b or (math.isnan(a) and math.isnan(b)), (topic, name)


@needs_data
def test_cli_scores_auto_argue_judgments_and_round_trips(tmp_path):
    from typer.testing import CliRunner

    from judge.cli.app import app

    runner = CliRunner()
    nuggets = str(DATA / "nuggets")

    def run(*args: str) -> None:
        result = runner.invoke(app, list(args))
        assert result.exit_code == 0, result.output

    run("score", str(RUN / "auto-argue-judgments.jsonl"), "--nuggets", nuggets, "--out", str(tmp_path / "direct"))
    written = {(r.request_id, r.metric): r.value for r in read_scores(tmp_path / "direct" / "scores.tsv")}
    for topic, metrics in auto_argue_scores().items():
        for metric, value in metrics.items():
            # full precision in the file, under the namespaced name
            assert abs(written[(topic, f"autoargue.{metric}")] - value) <= TOL, (topic, metric)
    run("import", "auto-argue", str(RUN / "auto-argue-judgments.jsonl"), "--nuggets", nuggets,
        "--out", str(tmp_path / "ours"))
    run("export", "auto-argue", str(tmp_path / "ours" / "judgments.jsonl"), "--nuggets", nuggets,
        "--out", str(tmp_path / "theirs.jsonl"))
    run("score", str(tmp_path / "theirs.jsonl"), "--nuggets", nuggets, "--out", str(tmp_path / "again"))
    again = {(r.request_id, r.metric): r.value for r in read_scores(tmp_path / "again" / "scores.tsv")}
    namespaced = {m.name for m in AUTO_ARGUE_MEASURES.values()}
    assert {k: v for k, v in again.items() if k[1] in namespaced} == \
        {k: v for k, v in written.items() if k[1] in namespaced}
    result = runner.invoke(app, ["score", str(RUN / "auto-argue-judgments.jsonl"), "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "--nuggets" in result.output
