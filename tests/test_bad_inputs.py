"""The bad-input suite: one parametrised test over generated malformed inputs, run through the real CLI.

Every case feeds `argue-judge eval` (reports, requests, nuggets, documents, options) or `argue-judge score`
(judgments) one broken input next to the bundled example's good ones, against the fake endpoint, and asserts:
exit code 2, exactly one line on stderr that names the file (and the line, where there is one) and says what to
fix, no traceback, no model call, and a time bound. Cases are built from small mutations of valid records, so a
new reader rule gets its cases by adding a line to a table.
"""

from __future__ import annotations

import copy
import gzip
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from judge.cli.app import app

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GOOD_REPORT: dict = json.loads((EXAMPLES / "reports" / "run-cited.jsonl").read_text(encoding="utf-8").splitlines()[0])
GOOD_REQUEST: dict = json.loads((EXAMPLES / "requests.jsonl").read_text(encoding="utf-8").splitlines()[0])
GOOD_BANK: dict = json.loads((EXAMPLES / "nuggets" / "nuggets_ex-101.v3.json").read_text(encoding="utf-8"))
GOOD_DOC = {"doc_id": "ok-doc", "title": "T", "text": "Some text."}
GOOD_JUDGMENT = {"run_id": "r", "request_id": "ex-101", "assessor": "human:a",
                 "sentences": [{"index": 0, "text": "Hello.", "citations": [], "outcome": 4}]}
SECONDS = 10.0
CAP = len(json.dumps(GOOD_REPORT)) + 50  # a line cap the good report fits under and the bad line does not

DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "9" * 5000


@dataclass
class Case:
    id: str
    kind: str                       # reports | requests | nuggets | docs | judgments | options
    content: bytes | None = None    # the bad file's bytes (None: a path that does not exist, or an options case)
    fragment: str = ""              # part of the message that says what to fix
    line: int | None = 2            # the line the message must name (None: the file only)
    suffix: str = ".jsonl"
    options: tuple[str, ...] = ()
    xfail: str | None = None        # a known gap outside the readers, for the lead (strict: must still fail)
    extra: dict[str, Any] = field(default_factory=dict)


def lines(*records: Any) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records).encode("utf-8")


def mutate(base: dict, change: Callable[[dict], Any]) -> dict:
    record = copy.deepcopy(base)
    change(record)
    return record


def setter(path: str, value: Any) -> Callable[[dict], None]:
    """A change that sets (or with value DELETE removes) a dotted path such as 'metadata.run_id'."""
    def apply(record: dict) -> None:
        *parents, last = path.split(".")
        target: Any = record
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if value is DELETE:
            del target[last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return apply


DELETE = object()


def gz(data: bytes) -> bytes:
    return gzip.compress(data)


def corrupt_gz(data: bytes) -> bytes:
    raw = gzip.compress(data * 200)
    return raw[:30] + bytes(b ^ 0x5A for b in raw[30:60]) + raw[60:]


def hostile_line_cases(kind: str, good: dict, text_field: str) -> list[Case]:
    """The same hostile encodings for every JSONL input: each one crashed some reader once."""
    first = lines(good)
    surrogate = json.dumps(mutate(good, setter(text_field, "x"))).replace('"x"', '"bad \\ud800 text"')
    return [
        Case(f"{kind}-lone-surrogate", kind, first + lines(surrogate), "lone UTF-16 surrogate"),
        Case(f"{kind}-deep-nesting", kind, first + lines(DEEP), "nested too deeply"),
        Case(f"{kind}-huge-integer", kind, first + lines('{"x": ' + HUGE_INT + "}"), "4,300 digits"),
        Case(f"{kind}-corrupt-gz", kind, corrupt_gz(first), "corrupt or truncated", line=None, suffix=".jsonl.gz",
             extra={"line_any": True}),
        Case(f"{kind}-not-gzip", kind, first, "", line=None, suffix=".jsonl.gz", extra={"line_any": True}),
        Case(f"{kind}-invalid-utf8", kind, first + b'{"a": "\xff\xfe"}\n', "save the file as UTF-8"),
        Case(f"{kind}-utf16", kind, json.dumps(good).encode("utf-16") + b"\n", "UTF-16", line=1),
        Case(f"{kind}-syntax-trailing-comma", kind, first + b'{"a": 1,}\n', "malformed JSON"),
        Case(f"{kind}-syntax-single-quotes", kind, first + b"{'a': 1}\n", "malformed JSON"),
        Case(f"{kind}-syntax-truncated", kind, first + json.dumps(good).encode()[:40] + b"\n", "malformed JSON"),
        Case(f"{kind}-not-object-list", kind, first + b"[1, 2]\n", "expected a JSON object"),
        Case(f"{kind}-not-object-number", kind, first + b"42\n", "expected a JSON object"),
        Case(f"{kind}-not-object-string", kind, first + b'"text"\n', "expected a JSON object"),
        Case(f"{kind}-not-object-null", kind, first + b"null\n", "expected a JSON object"),
        Case(f"{kind}-missing-file", kind, None, "no such file", line=None),
    ]


def record_cases(kind: str, good: dict, table: list[tuple[str, Callable[[dict], Any], str]]) -> list[Case]:
    return [Case(f"{kind}-{name}", kind, lines(good, mutate(good, change)), fragment)
            for name, change, fragment in table]


REPORT_TABLE = [
    ("no-metadata", setter("metadata", DELETE), "'metadata'"),
    ("metadata-list", setter("metadata", []), "'metadata' must be an object"),
    ("metadata-string", setter("metadata", "x"), "'metadata' must be an object"),
    ("no-run-id", setter("metadata.run_id", DELETE), "metadata.run_id"),
    ("run-id-empty", setter("metadata.run_id", " "), "metadata.run_id is empty"),
    ("run-id-list", setter("metadata.run_id", ["r"]), "metadata.run_id must be a string"),
    ("run-id-bool", setter("metadata.run_id", True), "metadata.run_id must be a string"),
    ("run-id-float", setter("metadata.run_id", 1.5), "metadata.run_id must be a string"),
    ("run-id-null", setter("metadata.run_id", None), "metadata.run_id must be a string"),
    ("no-topic-id", setter("metadata.topic_id", DELETE), "metadata.topic_id"),
    ("topic-id-object", setter("metadata.topic_id", {}), "metadata.topic_id must be a string"),
    ("topic-id-empty", setter("metadata.topic_id", ""), "metadata.topic_id is empty"),
    ("conflicting-ids", setter("metadata.request_id", "other"), "conflicting request ids"),
    ("team-id-number", setter("metadata.team_id", 3), "team_id must be a string"),
    ("no-responses", setter("responses", DELETE), "'responses'"),
    ("both-lists", setter("answer", []), "both 'responses' and 'answer'"),
    ("responses-string", setter("responses", "text"), "must be a list of sentences"),
    ("responses-object", setter("responses", {}), "must be a list of sentences"),
    ("sentence-string", setter("responses.0", "text"), "responses[0] must be an object"),
    ("sentence-null", setter("responses.0", None), "responses[0] must be an object"),
    ("sentence-no-text", setter("responses.0.text", DELETE), "responses[0].text"),
    ("text-number", setter("responses.0.text", 5), "responses[0].text must be a string"),
    ("text-list", setter("responses.0.text", ["a"]), "responses[0].text must be a string"),
    ("citations-string", setter("responses.0.citations", "d1"), "citations must be a list"),
    ("citations-number", setter("responses.0.citations", 3), "citations must be a list"),
    ("citation-float", setter("responses.0.citations", [1.5]), "entries must be document ids"),
    ("citation-null", setter("responses.0.citations", [None]), "entries must be document ids"),
    ("citation-list", setter("responses.0.citations", [["d"]]), "entries must be document ids"),
    ("citation-empty", setter("responses.0.citations", [""]), "empty document id"),
    ("citation-index-no-references", setter("responses.0.citations", [0]), "no 'references' list"),
    ("citation-index-too-big", lambda r: (r.update(references=["d"]), r["responses"][0].update(citations=[3])),
     "out of range"),
    ("citation-index-negative", lambda r: (r.update(references=["d"]), r["responses"][0].update(citations=[-1])),
     "out of range"),
    ("references-string", setter("references", "d"), "'references' must be a list"),
    ("reference-number", lambda r: (r.update(references=[7]), r["responses"][0].update(citations=[0])),
     "must be a document id string"),
    ("unknown-request", setter("metadata.topic_id", "no-such-request"), "unknown request 'no-such-request'"),
]

REQUEST_TABLE = [
    ("no-id", setter("request_id", DELETE), "'request_id'"),
    ("id-list", setter("request_id", ["x"]), "request_id must be a string"),
    ("id-bool", setter("request_id", False), "request_id must be a string"),
    ("id-empty", setter("request_id", ""), "request_id is empty"),
    ("conflicting-ids", setter("topic_id", "other"), "conflicting request ids"),
    ("no-need", lambda r: [r.pop(k, None) for k in ("problem_statement", "title", "narrative")], "at least a title"),
    ("problem-number", setter("problem_statement", 3), "'problem_statement' must be a string"),
    ("title-number", setter("title", 3), "'title' must be a string"),
    ("background-list", setter("background", ["b"]), "'background' must be a string"),
    ("narrative-object", lambda r: (r.pop("problem_statement"), r.update(narrative={})), "'narrative' must be"),
    ("limit-string", setter("limit", "2000"), "'limit' must be a positive integer"),
    ("limit-zero", setter("limit", 0), "'limit' must be a positive integer"),
    ("limit-negative", setter("limit", -5), "'limit' must be a positive integer"),
    ("limit-bool", setter("limit", True), "'limit' must be a positive integer"),
    ("limit-float", setter("limit", 2.5), "'limit' must be a positive integer"),
    ("word-limit-zero", setter("word_limit", 0), "'word_limit' must be a positive integer"),
    ("both-limits", lambda r: r.update(limit=100, word_limit=100), "both 'limit'"),
    ("collections-string", setter("collection_ids", "c"), "'collection_ids' must be a list"),
    ("collection-number", setter("collection_ids", [1]), "collection_ids[0] must be a string"),
]

DOC_TABLE = [
    ("no-id", setter("doc_id", DELETE), "'doc_id'"),
    ("id-number-float", setter("doc_id", 1.5), "doc_id must be a string"),
    ("id-list", setter("doc_id", ["x"]), "doc_id must be a string"),
    ("id-empty", setter("doc_id", " "), "doc_id is empty"),
    ("no-text", setter("text", DELETE), "missing field 'text'"),
    ("text-number", setter("text", 3), "field 'text' must be a string"),
    ("text-null", setter("text", None), "field 'text' must be a string"),
    ("title-list", setter("title", ["t"]), "field 'title' must be a string"),
]

JUDGMENT_TABLE = [
    ("no-run-id", setter("run_id", DELETE), "field 'run_id'"),
    ("run-id-number", setter("run_id", 5), "field 'run_id'"),
    ("sentences-string", setter("sentences", "x"), "field 'sentences'"),
    ("outcome-9", setter("sentences.0.outcome", 9), "outcome"),
    ("status-bogus", setter("sentences.0.status", "bogus"), "status"),
    ("unknown-field", setter("colour", "red"), "colour"),
    ("decision-bogus", setter("sentences.0.decisions", [{"decision": "bogus", "verdict": True}]), "decision"),
    ("index-string", setter("sentences.0.index", "zero"), "index"),
]


def _nugget(doc: dict) -> dict:
    return next(iter(doc["nugget_bank"].values()))


def bank_with(change: Callable[[dict], Any]) -> bytes:
    doc = copy.deepcopy(GOOD_BANK)
    change(doc)
    return json.dumps(doc, indent=1).encode("utf-8")


NUGGET_TABLE = [  # whole-file JSON banks: the message names the file and the nugget, not a line
    ("bank-number", lambda d: d.clear() or d.update(x=1), "'nugget_bank'"),
    ("no-query-id", lambda d: d.pop("query_id"), "'query_id'"),
    ("bank-string", lambda d: d.update(nugget_bank="x"), "'nugget_bank' must be an object"),
    ("nugget-string", lambda d: d["nugget_bank"].update({"Q?": "x"}), "must be an object"),
    ("question-number", lambda d: _nugget(d).update(question=5), "'question' must be a non-empty string"),
    ("question-id-list", lambda d: _nugget(d).update(question_id=["q"]), "question_id must be a string"),
    ("aggregator-xor", lambda d: _nugget(d).update(aggregator_type="XOR"), "use one of OR, AND"),
    ("aggregator-sum", lambda d: _nugget(d).update(aggregator_type="SUM"), "use one of OR, AND"),
    ("importance-bogus", lambda d: _nugget(d).update(importance="high"), "use one of vital, okay"),
    ("importance-5", lambda d: _nugget(d).update(importance=5), "use one of vital, okay"),
    ("importance-failed", lambda d: _nugget(d).update(importance="failed"), "could not score it"),
    ("absence-string", lambda d: _nugget(d).update(absence="yes"), "absence must be true or false"),
    ("answers-number", lambda d: _nugget(d).update(answers=3), "'answers' must be an object or a list"),
    ("answer-string-value", lambda d: _nugget(d).update(answers={"x": "d"}), "must be an object with 'answer'"),
    ("answer-text-number", lambda d: _nugget(d).update(answers={"x": {"answer": 3}}), "'answer' must be a string"),
    ("references-string", lambda d: _nugget(d).update(answers={"x": {"answer": "x", "references": "d"}}),
     "'references' must be a list"),
    ("reference-no-doc-id", lambda d: _nugget(d).update(answers={"x": {"answer": "x", "references": [{"id": 1}]}}),
     "references[0]"),
    ("sub-nuggets", lambda d: _nugget(d).update(sub_nuggets=[{"question": "S?"}]), "sub_nuggets are not supported"),
    ("duplicate-question-id", lambda d: d["nugget_bank"].update(
        {"Other?": {**_nugget(d), "question": "Other?"}}), "question ids must be unique"),
    ("claim-no-text", lambda d: d.update(claim_bank=[{"references": ["d"]}]), "'claim' must be a non-empty"),
    ("claim-bank-number", lambda d: d.update(claim_bank=3), "'claim_bank' must be an object"),
]

NUGGET_LINE_TABLE = [  # one bank per JSONL line: the message names file and line
    ("nuggetizer-no-qid", {"query": "q", "nuggets": []}, "'qid'"),
    ("nuggetizer-nuggets-object", {"qid": "1", "nuggets": {}}, "'nuggets' must be a list"),
    ("nuggetizer-no-text", {"qid": "1", "nuggets": [{"importance": "vital"}]}, "'text' must be a non-empty"),
    ("nuggetizer-importance-failed", {"qid": "1", "nuggets": [{"text": "t", "importance": "failed"}]},
     "could not score it"),
    ("items-not-list", {"query_id": "1", "items": {}}, "'items' must be a list"),
    ("items-no-query-id", {"items": [{"question_text": "Q?", "answer": "a"}]}, "'query_id'"),
    ("items-no-question", {"query_id": "1", "items": [{"answer": "a"}]}, "'question_text'"),
    ("items-item-string", {"query_id": "1", "items": ["x"]}, "items[0] must be an object"),
    ("ragtime26-no-topic", {"metadata": {"run_id": "r"}, "nugget_bank": []}, "'metadata.topic_id'"),
    ("duplicate-bank", {"qid": "ok", "nuggets": []}, "second nugget bank for request 'ok'"),
    ("unknown-layout", {"hello": 1}, "a nugget bank has"),
]

OPTIONS = [  # (id, options, fragment)
    ("citation-policy-bogus", ("--citation-policy", "bogus"), "--citation-policy"),
    ("concurrency-zero", ("--concurrency", "0"), "--concurrency"),
    ("prompts-missing-dir", ("--prompts", "/no/such/prompts"), "--prompts"),
    ("unknown-option", ("--colour", "red"), "--colour"),
    ("temperature-nan", ("--temperature", "nan"), "--temperature"),
    ("temperature-negative", ("--temperature", "-0.5"), "--temperature"),
    ("temperature-inf", ("--temperature", "inf"), "--temperature"),
    ("max-doc-chars-zero", ("--max-doc-chars", "0"), "--max-doc-chars"),
    ("max-doc-bytes-zero", ("--max-doc-bytes", "0"), "--max-doc-bytes"),
    ("max-tokens-negative", ("--max-tokens", "-1"), "--max-tokens"),
    ("max-tokens-zero", ("--max-tokens", "0"), "--max-tokens"),
    ("max-cost-negative", ("--max-cost", "-1"), "--max-cost"),
    ("max-cost-nan", ("--max-cost", "nan"), "--max-cost"),
    # a model of its own: litellm memoises prices, and a test elsewhere prices openai/fake for a while
    ("max-cost-unknown-price", ("--max-cost", "1", "--model", "openai/argue-judge-unpriced"), "--price-per-1k"),
    ("price-per-1k-negative", ("--max-cost", "1", "--price-per-1k", "-2"), "--price-per-1k"),
    ("max-failed-fraction-above-one", ("--max-failed-fraction", "1.5"), "--max-failed-fraction"),
    ("max-failed-fraction-negative", ("--max-failed-fraction", "-0.1"), "--max-failed-fraction"),
    ("max-failed-fraction-nan", ("--max-failed-fraction", "nan"), "--max-failed-fraction"),
    ("out-is-a-file", ("--out", "{existing_file}"), "--out"),
]


def generate() -> list[Case]:
    cases: list[Case] = []
    cases += hostile_line_cases("reports", GOOD_REPORT, "responses.0.text")
    cases += record_cases("reports", GOOD_REPORT, REPORT_TABLE)
    cases += [
        Case("reports-empty-file", "reports", b"", "empty", line=None),
        Case("reports-blank-lines-only", "reports", b"\n \n\t\n", "empty", line=None),
        Case("reports-duplicate", "reports", lines(GOOD_REPORT, GOOD_REPORT), "duplicate report"),
        Case("reports-empty-directory", "reports", None, "directory has no", line=None, extra={"directory": True}),
        Case("reports-huge-line", "reports", lines(GOOD_REPORT) + b'{"a": "' + b"x" * (CAP + 100) + b'"}\n',
             "is longer than", extra={"max_line": CAP}),
    ]
    cases += hostile_line_cases("requests", GOOD_REQUEST, "problem_statement")
    cases += record_cases("requests", GOOD_REQUEST, REQUEST_TABLE)
    cases += [
        Case("requests-empty-file", "requests", b"", "empty", line=None),
        Case("requests-duplicate", "requests", lines(GOOD_REQUEST, GOOD_REQUEST), "duplicate request_id"),
    ]
    cases += hostile_line_cases("docs", GOOD_DOC, "text")
    cases += record_cases("docs", GOOD_DOC, DOC_TABLE)
    cases += [Case("docs-empty-directory", "docs", None, "directory has no", line=None, extra={"directory": True})]
    cases += hostile_line_cases("judgments", GOOD_JUDGMENT, "sentences.0.text")
    cases += record_cases("judgments", GOOD_JUDGMENT, JUDGMENT_TABLE)
    cases += [Case("judgments-empty-file", "judgments", b"", "empty", line=None),
              Case("judgments-blank-lines-only", "judgments", b"\n\n", "empty", line=None)]
    cases += [Case(f"nuggets-{name}", "nuggets", bank_with(change), fragment, line=None, suffix=".json")
              for name, change, fragment in NUGGET_TABLE]
    good_line = {"qid": "ok", "nuggets": []}
    cases += [Case(f"nuggets-line-{name}", "nuggets", lines(good_line, doc), fragment)
              for name, doc, fragment in NUGGET_LINE_TABLE]
    cases += [
        Case("nuggets-malformed-json-multiline", "nuggets", b'{\n "query_id": "1",\n "nugget_bank": {,}\n}\n',
             "malformed JSON", line=3, suffix=".json"),
        Case("nuggets-empty-file", "nuggets", b"", "empty", line=None, suffix=".json"),
        Case("nuggets-empty-list", "nuggets", b"[]", "no nugget bank", line=None, suffix=".json"),
        Case("nuggets-lone-surrogate", "nuggets", b'{"query_id": "1", "nugget_bank": {"Q\\udc00?": {}}}',
             "lone UTF-16 surrogate", line=None, suffix=".json"),
        Case("nuggets-deep", "nuggets", DEEP.encode(), "nested too deeply", line=None, suffix=".json"),
        Case("nuggets-huge-integer", "nuggets", b'{"query_id": ' + HUGE_INT.encode() + b"}", "4,300 digits",
             line=None, suffix=".json"),
        Case("nuggets-corrupt-gz", "nuggets", corrupt_gz(json.dumps(GOOD_BANK).encode()), "corrupt or truncated",
             line=None, suffix=".json.gz"),
        Case("nuggets-utf16", "nuggets", json.dumps(GOOD_BANK).encode("utf-16"), "UTF-16", line=None, suffix=".json"),
        Case("nuggets-invalid-utf8", "nuggets", b'{"query_id": "\xff"}', "save the file as UTF-8", line=None,
             suffix=".json"),
        Case("nuggets-missing-file", "nuggets", None, "no such file", line=None, suffix=".json"),
    ]
    cases += [Case(f"options-{name}", "options", None, fragment, line=None, options=opts)
              for name, opts, fragment in OPTIONS]
    return cases


CASES = generate()


def _params() -> list[Any]:
    marks = {c.id: [pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else [] for c in CASES}
    return [pytest.param(c, id=c.id, marks=marks[c.id]) for c in CASES]


def test_suite_is_large_and_covers_every_input():
    assert len(CASES) >= 150 and len({c.id for c in CASES}) == len(CASES)
    assert {c.kind for c in CASES} == {"reports", "requests", "nuggets", "docs", "judgments", "options"}


def _bad_path(case: Case, tmp: Path) -> Path:
    if case.extra.get("directory"):
        path = tmp / "bad-dir"
        path.mkdir()
        (path / "notes.txt").write_text("not data")
        return path
    path = tmp / f"bad-{case.kind}{case.suffix}"
    if case.content is not None:
        path.write_bytes(case.content)
    return path


def _args(case: Case, bad: Path, ep: Any, tmp: Path) -> list[str]:
    if case.kind == "judgments":
        return ["score", str(bad), "--out", str(tmp / "out")]
    files = {"reports": EXAMPLES / "reports" / "run-cited.jsonl", "requests": EXAMPLES / "requests.jsonl",
             "nuggets": EXAMPLES / "nuggets", "docs": EXAMPLES / "docs.jsonl"}
    if case.kind in files:
        files[case.kind] = bad
    existing = tmp / "existing-file"
    existing.write_text("x")
    options = [o.replace("{existing_file}", str(existing)) for o in case.options]
    out = [] if "--out" in options else ["--out", str(tmp / "out")]
    return ["eval", str(files["reports"]), "--requests", str(files["requests"]), "--docs", str(files["docs"]),
            "--nuggets", str(files["nuggets"]), "--model", "openai/fake", "--api-base", ep.api_base,
            "--api-key", "x", "--cache-dir", str(tmp / "cache"), *out, *options]


@pytest.mark.parametrize("case", _params())
def test_bad_input(case: Case, endpoint, tmp_path, monkeypatch):
    if "max_line" in case.extra:
        monkeypatch.setattr("judge.formats._jsonl.MAX_LINE_BYTES", case.extra["max_line"])
    bad = _bad_path(case, tmp_path)
    started = time.perf_counter()
    result = CliRunner().invoke(app, _args(case, bad, endpoint, tmp_path))
    elapsed = time.perf_counter() - started

    stderr_lines = [line for line in result.stderr.splitlines() if line.strip()]
    output = result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in output
    assert result.exit_code == 2, f"exit {result.exit_code}: {output}"
    assert len(stderr_lines) == 1, result.stderr
    message = stderr_lines[0]
    if case.kind == "options":
        assert case.fragment.lower() in message.lower(), message
    else:
        where = f"{bad}:{case.line}:" if case.line is not None else f"{bad}"
        if case.extra.get("line_any"):
            assert message.count(str(bad)) == 1, message
        else:
            assert where in message, message
        assert case.fragment.lower() in message.lower(), message
    assert endpoint.calls == 0  # refused before any model call
    assert elapsed < SECONDS
