"""The static HTML view, checked structurally: the bundled example judged through the local FakeEndpoint (smart
responder of conftest.py, never the network), rendered and parsed back with html.parser."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from typer.testing import CliRunner

from judge.api import read_judgments
from judge.cli.app import app
from judge.formats import DocumentStore, read_nugget_banks, read_requests
from judge.formats.judgments import DecisionRecord, ReportJudgment, write_judgments
from judge.labels import OUTCOME_VALUE, Outcome, Value
from judge.llm.client import ModelSettings
from judge.metrics import score_report
from judge.run.evaluate import evaluate
from judge.run.inputs import Inputs
from judge.run.spec import EvalSpec
from judge.testing import FakeEndpoint
from judge.types import Document
from judge.view import write_view
from judge.view.evidence import evidence_spans
from tests.conftest import smart_responder

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
VALUE_CSS = {Value.POSITIVE: "pos", Value.NEGATIVE: "neg", Value.NEUTRAL: "neu"}
STATUS_CSS = {"truncated": "cut", "failed": "fail", "undetermined": "undet"}
runner = CliRunner()


# ---------------------------------------------------------------------------------------------------------
# Fixtures: the example judged once through the fake endpoint, and its view
# ---------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """(judgments path, records, requests, banks, documents dict) of the bundled example."""
    root = tmp_path_factory.mktemp("view-example")
    inputs = Inputs.load([EXAMPLES / "reports"], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
                         [EXAMPLES / "docs.jsonl"], index_dir=root / "docstore")
    ep = FakeEndpoint(smart_responder)
    try:
        evaluation = evaluate(inputs, EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x"),
                                                  cache=root / "cache"))
    finally:
        ep.stop()
    path = root / "judgments.jsonl"
    write_judgments(path, evaluation.judgments)
    docs = {}
    for line in (EXAMPLES / "docs.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        docs[record["doc_id"]] = Document(**record)
    return path, list(read_judgments(path)), inputs.requests, inputs.banks, docs


@pytest.fixture(scope="module")
def view(example, tmp_path_factory):
    _, records, requests, banks, docs = example
    out = tmp_path_factory.mktemp("view")
    files = write_view(records, out, requests=requests, banks=banks, documents=docs)
    return out, files


class Page(HTMLParser):
    """Elements of a page as (tag, attrs, text inside), plus every raw <script> and the page's text."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[dict] = []
        self._open: list[dict] = []
        self.scripts = 0
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(element)
        if tag == "script":
            self.scripts += 1
        if tag not in ("meta", "br", "img", "input", "link", "rect"):
            self._open.append(element)

    def handle_endtag(self, tag):
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i]["tag"] == tag:
                del self._open[i:]
                break

    def handle_data(self, data):
        for element in self._open:
            element["text"] += data

    def having(self, cls: str | None = None, tag: str | None = None) -> list[dict]:
        return [e for e in self.elements if (tag is None or e["tag"] == tag)
                and (cls is None or cls in e["attrs"].get("class", "").split())]


def read_page(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


def expected_css(sentence) -> str:
    if sentence.status == "judged" and sentence.outcome is not None:
        return VALUE_CSS[OUTCOME_VALUE[Outcome(sentence.outcome)]]
    return STATUS_CSS.get(sentence.status, "undet")


def cells(page: Page, row: dict) -> list[str]:
    """The texts of a table row's cells."""
    following = page.elements[page.elements.index(row) + 1:]
    end = next((i for i, e in enumerate(following) if e["tag"] == "tr"), len(following))
    return [e["text"].strip() for e in following[:end] if e["tag"] in ("td", "th")]


def report_pages(out: Path) -> dict[tuple[str, str], Page]:
    pages = {}
    for path in sorted((out / "reports").glob("*.html")):
        page = read_page(path)
        crumbs = page.having(tag="nav")[0]["text"]
        run, request = re.search(r"run (\S+) › request (\S+)", crumbs).groups()
        pages[(run, request)] = page
    return pages


# ---------------------------------------------------------------------------------------------------------
# Structure
# ---------------------------------------------------------------------------------------------------------

def test_every_sentence_is_shown_with_its_outcome_class(example, view):
    _, records, *_ = example
    out, files = view
    pages = report_pages(out)
    assert set(pages) == {j.key for j in records} and len(files.pages) == 6
    classes = Counter()
    for judgment in records:
        shown = pages[judgment.key].having("sentence", "li")
        assert [e["attrs"]["id"] for e in shown] == [f"s{s.index + 1}" for s in judgment.sentences]
        for element, sentence in zip(shown, judgment.sentences):
            css = expected_css(sentence)
            assert css in element["attrs"]["class"].split(), (judgment.key, sentence.index)
            assert element["attrs"]["data-outcome"] == ("" if sentence.outcome is None else str(sentence.outcome))
            assert element["attrs"]["data-status"] == sentence.status
            assert pages[judgment.key].having("stext")[sentence.index]["text"] == sentence.text
            elements = pages[judgment.key].elements
            badge = next(e for e in elements[elements.index(element):] if "badge" in e["attrs"].get("class", ""))
            assert css in badge["attrs"]["class"].split()
            if sentence.outcome is not None:
                assert badge["text"].endswith(f"#{sentence.outcome}")
            classes[css] += 1
    # the example has positive, negative and neutral sentences and one past the length limit (run-padded ex-101)
    assert classes["pos"] and classes["neg"] and classes["neu"] and classes["cut"] == 1


def test_outcome_counts_and_histograms_match_the_records(example, view):
    _, records, *_ = example
    out, _ = view
    index = read_page(out / "index.html")
    for run in {j.run_id for j in records}:
        expected = Counter(s.outcome for j in records if j.run_id == run for s in j.sentences
                           if s.status == "judged" and s.outcome is not None)
        row = next(e for e in index.having(tag="tr") if e["attrs"].get("data-run") == run)
        position = index.elements.index(row)
        counts = [e for e in index.elements[position:] if e["tag"] == "text" and "count" in
                  e["attrs"].get("class", "")][:8]
        assert {int(e["attrs"]["data-outcome"]): int(e["text"]) for e in counts} == \
            {n: expected.get(n, 0) for n in range(1, 9)}
    pages = report_pages(out)
    for judgment in records:
        chips = {e["attrs"]["data-kind"]: int(e["attrs"]["data-count"]) for e in pages[judgment.key].having("chip")}
        shown = Counter(expected_css(s) for s in judgment.sentences)
        assert {k: v for k, v in chips.items() if v} == dict(shown)


def test_nuggets_panel_shows_earned_and_missed_with_the_earning_sentences(example, view):
    _, records, *_ = example
    out, _ = view
    pages = report_pages(out)
    total_earned = total_missed = 0
    for judgment in records:
        page = pages[judgment.key]
        earned = score_report(judgment).earned
        nuggets = page.having("nugget", "li")
        assert [e["attrs"]["data-nugget"] for e in nuggets] == [n.nugget_id for n in judgment.nuggets]
        for element in nuggets:
            state = "earned" if element["attrs"]["data-nugget"] in earned else "missed"
            assert state in element["attrs"]["class"].split()
        total_earned += len(earned)
        total_missed += len(nuggets) - len(earned)
        # every "by sentence N" link points at a sentence that earned that nugget
        for element in nuggets:
            position = page.elements.index(element)
            nugget_id = element["attrs"]["data-nugget"]
            following = page.elements[position + 1:]
            end = next((i for i, e in enumerate(following) if e in nuggets), len(following))
            for link in (e for e in following[:end] if e["tag"] == "a"):
                number = int(link["attrs"]["href"].removeprefix("#s"))
                sentence = judgment.sentences[number - 1]
                assert nugget_id in {e.nugget_id for e in sentence.earned}
        summary = next(e for e in page.elements if e["attrs"].get("id") == "nugget-summary")
        assert summary["attrs"]["data-earned"] == str(len(earned))
    assert total_earned and total_missed


def test_scores_on_the_pages_are_the_metrics_values(example, view):
    _, records, *_ = example
    out, _ = view
    pages = report_pages(out)
    for judgment in records:
        scores = score_report(judgment)
        shown = [e["text"] for e in pages[judgment.key].having(tag="b") if re.fullmatch(r"[\d.–]+", e["text"])][:4]
        wanted = [scores["SentencePrecision"], scores["NuggetRecall"], scores["NuggetRecall(weighted=True)"],
                  scores["F1"]]
        assert shown == ["–" if math.isnan(v) else f"{v:.3f}" for v in wanted]


def test_every_local_link_resolves_and_nothing_points_outside(view):
    out, files = view
    assert files.index == out / "index.html"
    checked = 0
    for path in files.all:
        page = read_page(path)
        ids = {e["attrs"]["id"] for e in page.elements if "id" in e["attrs"]}
        for element in page.elements:
            for attr in ("href", "src", "action", "xlink:href"):
                if attr not in element["attrs"]:
                    continue
                assert attr == "href", f"{path.name}: unexpected {attr} attribute"
                link = urlsplit(element["attrs"][attr])
                assert not link.scheme and not link.netloc, f"{path.name}: external link {element['attrs'][attr]}"
                if link.path:
                    target = (path.parent / unquote(link.path)).resolve()
                    assert target.is_file(), f"{path.name}: broken link {element['attrs'][attr]}"
                    if link.fragment:
                        assert f'id="{link.fragment}"' in target.read_text(encoding="utf-8")
                else:
                    assert link.fragment in ids, f"{path.name}: no element #{link.fragment}"
                checked += 1
        text = path.read_text(encoding="utf-8")
        # nor anywhere else: no URL with a scheme, no CSS import or url()
        assert not re.search(r"(https?|ftp|wss?):", text), path.name
        assert "@import" not in text and "url(" not in text
    # the index links every report page (from the leaderboard and the reports table), each page links back
    index_targets = {e["attrs"]["href"] for e in read_page(files.index).having(tag="a")}
    assert index_targets == {p.relative_to(out).as_posix() for p in files.pages}
    assert checked >= 2 * len(files.pages) + len(files.pages)


def test_decisions_show_verdict_rationale_model_prompt_hash_and_highlighted_evidence(example, view):
    _, records, *_ = example
    out, _ = view
    pages = report_pages(out)
    cited = next(j for j in records if j.run_id == "run-cited" and j.request_id == "ex-101")
    page = pages[cited.key]
    boxes = page.having("decision", "div")
    decisions = [d for s in cited.sentences for d in s.decisions]
    assert len(boxes) == len(decisions)
    for box, record in zip(boxes, decisions):
        assert box["attrs"]["data-decision"] == record.decision
        assert box["attrs"]["data-verdict"] == {True: "yes", False: "no", None: "undecided"}[record.verdict]
        assert record.judge in box["text"] and record.prompt_hash in box["text"]
        assert record.rationale in box["text"]
    marks = [e["text"] for e in page.having(tag="mark")]
    evidence = [d.evidence for d in decisions if d.decision == "supports_citation" and d.verdict]
    assert evidence and len(marks) == len(evidence)
    for mark, quote in zip(marks, evidence):
        assert mark.strip() == quote.strip()


def test_evidence_is_found_despite_case_quotes_and_white_space():
    document = "The board said:\n  \u201cWork  began in March\n2021,\u201d it\u2019s said. Nothing else."
    spans = evidence_spans(document, 'work began in march 2021," it\'s said')
    assert [document[s:e] for s, e in spans] == ["Work  began in March\n2021,\u201d it\u2019s said"]
    assert evidence_spans(document, "a sentence that is not there at all") == []
    # a quote the validator splits at "..." is highlighted piece by piece
    spans = evidence_spans(document, "The board said ... it's said. Nothing else.")
    assert [document[s:e] for s, e in spans] == ["The board said", "it\u2019s said. Nothing else."]


# ---------------------------------------------------------------------------------------------------------
# Hostile text
# ---------------------------------------------------------------------------------------------------------

HOSTILE = '<script>document.body.setAttribute("data-pwned","1")</script><img src=x onerror="alert(1)">'


def hostile_records(records: list[ReportJudgment]) -> list[ReportJudgment]:
    """run-cited ex-101 with script in the run id, a sentence, a rationale, an evidence quote and a nugget."""
    judgment = next(j for j in records if j.key == ("run-cited", "ex-101"))
    sentences = list(judgment.sentences)
    first_cited = next(i for i, s in enumerate(sentences) if s.decisions and s.decisions[0].doc_ids)
    decision = sentences[first_cited].decisions[0]
    sentences[0] = sentences[0].model_copy(update={"text": "Intro " + HOSTILE})
    sentences[first_cited] = sentences[first_cited].model_copy(update={"decisions": [
        decision.model_copy(update={"rationale": "</details></li>" + HOSTILE, "evidence": HOSTILE})]})
    nuggets = [n.model_copy(update={"question": n.question + HOSTILE}) for n in judgment.nuggets]
    return [judgment.model_copy(update={"run_id": 'evil"><script>x()</script>', "sentences": sentences,
                                        "nuggets": nuggets})]


def test_hostile_report_document_and_request_text_is_escaped(example, tmp_path):
    _, records, requests, banks, docs = example
    request = requests["ex-101"].model_copy(update={"title": "Title " + HOSTILE, "background": HOSTILE})
    doc_id = next(d.doc_ids[0] for s in hostile_records(records)[0].sentences for d in s.decisions if d.doc_ids)
    docs = {**docs, doc_id: docs[doc_id].model_copy(update={"title": HOSTILE, "text": HOSTILE + docs[doc_id].text})}
    files = write_view(hostile_records(records), tmp_path, requests={"ex-101": request}, documents=docs)
    for path in files.all:
        html = path.read_text(encoding="utf-8")
        page = Page(html)
        assert page.scripts == 1, path.name              # only our own script
        assert not page.having(tag="img")
        assert not any("onerror" in e["attrs"] for e in page.elements)
        assert "<script>document" not in html and "<script>x()" not in html
    report = read_page(files.pages[0])
    assert "&lt;script&gt;" in files.pages[0].read_text(encoding="utf-8")
    # the text is still there, shown as text
    assert any(HOSTILE in e["text"] for e in report.having("stext"))
    assert any(HOSTILE in e["text"] for e in report.having(tag="h1"))
    # the run id becomes a safe file name
    assert re.fullmatch(r"reports/[A-Za-z0-9._-]+\.html", files.pages[0].relative_to(tmp_path).as_posix())


# ---------------------------------------------------------------------------------------------------------
# Records from people, failures, comparisons, the command line
# ---------------------------------------------------------------------------------------------------------

def test_outcome_only_human_records_failures_and_missing_banks_render(example, tmp_path):
    _, records, *_ = example
    judgment = next(j for j in records if j.key == ("run-miscited", "ex-102"))
    human = judgment.model_copy(update={
        "assessor": "human:alice", "nuggets": None,
        "sentences": [s.model_copy(update={"decisions": []}) for s in judgment.sentences]})
    failed = judgment.model_copy(update={"run_id": "run-failing", "sentences": [
        judgment.sentences[0].model_copy(update={"status": "failed", "outcome": None, "decisions": [
            DecisionRecord(decision="supports_citation", verdict=None, doc_ids=["ex-d11"],
                           error="the evidence you quoted does not occur in the document", judge="openai/fake")]}),
        *judgment.sentences[1:]]})
    files = write_view([human, failed], tmp_path)
    pages = {p.name.split("__")[0]: read_page(p) for p in files.pages}
    alice = pages["run-miscited"]
    assert "recall is undefined" in alice.having(tag="aside")[0]["text"]
    assert not alice.having("decision")
    assert len(alice.having("sentence", "li")) == len(judgment.sentences)
    failing = pages["run-failing"]
    first = failing.having("sentence", "li")[0]
    assert "fail" in first["attrs"]["class"].split() and first["attrs"]["data-status"] == "failed"
    assert failing.having("decision")[0]["attrs"]["data-verdict"] == "failed"
    assert "does not occur in the document" in failing.having("decision")[0]["text"]


def test_decisions_without_outcomes_walk_the_flowchart(example, tmp_path):
    """A human who records only decisions gets the outcome `argue-judge score` would give."""
    _, records, *_ = example
    judgment = next(j for j in records if j.key == ("run-cited", "ex-102"))
    stripped = judgment.model_copy(update={"assessor": "human:bob", "sentences": [
        s.model_copy(update={"outcome": None, "earned": []}) for s in judgment.sentences]})
    files = write_view([stripped], tmp_path)
    shown = read_page(files.pages[0]).having("sentence", "li")
    assert [e["attrs"]["data-outcome"] for e in shown] == [str(s.outcome) for s in judgment.sentences]


def flipped(records: list[ReportJudgment], key: tuple[str, str], number: int) -> list[ReportJudgment]:
    """A copy of the records, relabelled human, with the support verdict and outcome of one sentence flipped."""
    result = []
    for j in records:
        j = j.model_copy(update={"assessor": "human:carol"})
        if j.key == key:
            sentences = list(j.sentences)
            s = sentences[number - 1]
            decision = s.decisions[0].model_copy(update={"verdict": not s.decisions[0].verdict})
            sentences[number - 1] = s.model_copy(update={
                "decisions": [decision], "outcome": Outcome(1 if s.outcome != 1 else 2), "earned": []})
            j = j.model_copy(update={"sentences": sentences})
        result.append(j)
    return result


def kappa_by_hand(a: list[str], b: list[str]) -> float:
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b)) / n
    labels = set(a) | set(b)
    chance = sum(a.count(k) * b.count(k) for k in labels) / (n * n)
    return (observed - chance) / (1 - chance)


def test_comparison_highlights_the_disagreement_and_reports_kappa(example, tmp_path):
    _, records, requests, banks, docs = example
    key = ("run-cited", "ex-101")
    cited_number = next(s.index + 1 for j in records if j.key == key for s in j.sentences if s.citations)
    other = flipped(records, key, cited_number)
    files = write_view(records, tmp_path, requests=requests, banks=banks, documents=docs, against=other,
                       labels=("openai/fake", "human:carol"))
    compare_pages = sorted((tmp_path / "compare").glob("*.html"))
    assert len(compare_pages) == 6 and set(compare_pages) <= set(files.pages)
    index = read_page(files.index)
    rows = [e for e in index.having(tag="tr") if e["attrs"].get("data-decision")]
    table = {e["attrs"]["data-decision"]: cells(index, e) for e in rows}
    a = [("yes" if d.verdict else "no") for j in records for s in j.sentences for d in s.decisions
         if d.decision == "supports_citation"]
    b = list(a)
    position = [i for i, (j, s) in enumerate((j, s) for j in records for s in j.sentences for d in s.decisions
                                            if d.decision == "supports_citation")
                if j.key == key and s.index + 1 == cited_number][0]
    b[position] = "no" if a[position] == "yes" else "yes"
    items, agreeing, kappa = table["supports_citation"][1:]
    assert (int(items), int(agreeing)) == (len(a), len(a) - 1)
    assert float(kappa) == pytest.approx(kappa_by_hand(a, b), abs=5e-4)
    for path in compare_pages:
        page = read_page(path)
        rows = [e for e in page.having(tag="tr") if e["attrs"].get("class") in ("agree", "disagree")]
        disagreeing = [int(e["attrs"]["id"][1:]) for e in rows if e["attrs"]["class"] == "disagree"]
        if key[0] in path.name and key[1] in path.name:
            assert disagreeing == [cited_number]
            assert page.having("diff")  # the two decisions that differ are marked
        else:
            assert disagreeing == []


def test_comparison_refuses_different_reports(example, tmp_path):
    _, records, *_ = example
    other = [j.model_copy(update={"sentences": [s.model_copy(update={"text": s.text + " (edited)"})
                                                for s in j.sentences]}) for j in records]
    with pytest.raises(Exception, match="differs between the judgments sets"):
        write_view(records, tmp_path, against=other)


def test_cli_view_writes_pages_and_reports_bad_input(example, tmp_path):
    path, records, *_ = example
    other = tmp_path / "human.jsonl"
    write_judgments(other, flipped(records, ("run-cited", "ex-101"), 2))
    out = tmp_path / "view"
    # a page an earlier view wrote (its report is gone since): removed, so no link points at stale judgments
    earlier = write_view([records[0].model_copy(update={"run_id": "run-old"})], out)
    stale = next(p for p in earlier.pages if "run-old" in p.name)
    result = runner.invoke(app, ["view", str(path), "--nuggets", str(EXAMPLES / "nuggets"),
                                 "--requests", str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl"),
                                 "--against", str(other), "--cache-dir", str(tmp_path / "cache"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and (out / "index.html").is_file()
    assert len(list((out / "reports").glob("*.html"))) == 6 and not stale.exists()
    assert len(list((out / "compare").glob("*.html"))) == 6
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "openai/fake vs human:carol" in index
    report = (out / "reports").glob("run-cited__ex-101-*.html").__next__().read_text(encoding="utf-8")
    assert "The Marrowick flood barrier" in report  # the request title, from --requests

    bad = tmp_path / "bad.jsonl"
    bad.write_text(path.read_text(encoding="utf-8").splitlines()[0] + "\n{\"run_id\": 3}\n", encoding="utf-8")
    result = runner.invoke(app, ["view", str(bad), "--out", str(tmp_path / "bad-view")])
    assert result.exit_code == 2
    assert "bad.jsonl:2" in result.output and "Traceback" not in result.output


def test_view_uses_given_banks_and_requests_only_as_text(example, tmp_path):
    _, records, *_ = example
    banks = read_nugget_banks(EXAMPLES / "nuggets")
    requests = read_requests(EXAMPLES / "requests.jsonl")
    with DocumentStore.open(EXAMPLES / "docs.jsonl", tmp_path / "docstore") as store:
        files = write_view(records, tmp_path / "v", requests=requests, banks=banks, documents=store)
    page = (tmp_path / "v" / "reports").glob("run-cited__ex-101-*.html").__next__().read_text(encoding="utf-8")
    assert "(ex-d02)" in page  # the bank's attesting document beside the answer
    assert len(files.pages) == 6


def test_confidence_threshold_and_flipped_verdict_are_shown_where_recorded(example, tmp_path):
    _, records, *_ = example
    judgment = next(j for j in records if j.key == ("run-cited", "ex-102"))
    first = judgment.sentences[0]
    support = next(d for d in first.decisions if d.decision == "supports_citation")
    flipped = support.model_copy(update={"confidence": 0.4321, "threshold": 0.6, "model_verdict": not support.verdict})
    others = [d for d in first.decisions if d is not support]
    record = judgment.model_copy(update={"sentences": [
        first.model_copy(update={"decisions": [flipped, *others]}), *judgment.sentences[1:]]})
    page = read_page(write_view([record], tmp_path).pages[0])
    boxes = [b for b in page.having("decision") if b["attrs"].get("data-decision") == "supports_citation"]
    shown = boxes[0]["text"]
    assert "confidence 0.432" in shown and "threshold 0.600" in shown
    assert f"the model said {'yes' if flipped.model_verdict else 'no'}" in shown
    # a decision without a recorded confidence says nothing about it (never a guessed number)
    assert not any("confidence" in b["text"] for b in boxes[1:])


def test_a_view_into_a_folder_removes_only_what_an_earlier_view_wrote(example, tmp_path):
    """The user's own files beside the pages (even .html files in reports/) are never removed;
    the pages of an earlier view that this one does not write again are."""
    _, records, *_ = example
    out = tmp_path / "site"
    notes, readme = out / "reports" / "2024-notes.html", out / "README.txt"
    notes.parent.mkdir(parents=True)
    notes.write_text("my notes", encoding="utf-8")
    readme.write_text("mine", encoding="utf-8")
    earlier = write_view([*records, records[0].model_copy(update={"run_id": "run-old"})], out)
    old_page = next(p for p in earlier.pages if "run-old" in p.name)
    files = write_view(records, out)
    assert notes.read_text(encoding="utf-8") == "my notes" and readme.read_text(encoding="utf-8") == "mine"
    assert not old_page.exists()
    assert sorted((out / "reports").glob("*.html")) == sorted([*files.pages, notes])


def test_an_edited_view_manifest_cannot_make_a_view_delete_other_files(example, tmp_path):
    from judge.view.render import MANIFEST

    _, records, *_ = example
    out, outside = tmp_path / "site", tmp_path / "keep.html"
    outside.write_text("keep", encoding="utf-8")
    write_view(records, out)
    (out / MANIFEST).write_text(f"../keep.html\n{outside}\nindex.html\n", encoding="utf-8")
    write_view(records, out)
    assert outside.read_text(encoding="utf-8") == "keep"
