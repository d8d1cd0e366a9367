"""Tests for judge.formats: the readers of reports, requests, nugget banks and document collections."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import os
from pathlib import Path

import pytest

from judge.errors import InputError
from judge.formats import DocumentStore, _jsonl, input_warnings, read_nugget_banks, read_reports, read_requests
from judge.formats._jsonl import expand_paths, iter_jsonl, read_json_document

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ARGUE_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
NEUCLIR = SHARED / "neuclir24"


def jl(*records: object) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def assert_names(err: InputError, path: Path | str, line: int | None) -> None:
    assert err.path == str(path)
    assert err.line == line
    if line is not None:
        assert f"{path}:{line}:" in str(err)
    else:
        assert str(err).startswith(f"{path}:")


def neuclir(run: str = "r1", topic: str = "300", responses: list | None = None, **extra: object) -> dict:
    meta = {"run_id": run, "topic_id": topic, "team_id": "t"}
    if responses is None:
        responses = [{"text": "A.", "citations": []}]
    rec = {"metadata": meta, "responses": responses}
    rec.update(extra)
    return rec


# ---------------------------------------------------------------------------------------------- _jsonl


class TestJsonl:
    def test_literal_string_and_blank_lines(self):
        rows = list(iter_jsonl('{"a": 1}\n\n   \n{"a": 2}\n'))
        assert rows == [(1, {"a": 1}), (4, {"a": 2})]

    def test_single_line_literal_starting_with_brace(self):
        assert list(iter_jsonl('{"a": 1}')) == [(1, {"a": 1})]

    def test_malformed_json_names_line_and_column(self, tmp_path):
        p = write(tmp_path / "x.jsonl", '{"a": 1}\n{"a": 2,, }\n')
        with pytest.raises(InputError) as ei:
            list(iter_jsonl(p))
        assert_names(ei.value, p, 2)
        assert "malformed JSON at column 9" in ei.value.message

    def test_malformed_literal_is_named_string(self):
        with pytest.raises(InputError) as ei:
            list(iter_jsonl('{"a": 1}\n{oops\n'))
        assert_names(ei.value, "<string>", 2)

    def test_non_object_line(self, tmp_path):
        p = write(tmp_path / "x.jsonl", '{"a": 1}\n[1, 2]\n')
        with pytest.raises(InputError) as ei:
            list(iter_jsonl(p))
        assert_names(ei.value, p, 2)
        assert "expected a JSON object" in ei.value.message and "a list" in ei.value.message

    def test_huge_line_is_refused(self, tmp_path, monkeypatch):
        monkeypatch.setattr(_jsonl, "MAX_LINE_BYTES", 100)
        p = write(tmp_path / "x.jsonl", jl({"a": "short"}, {"a": "x" * 500}))
        with pytest.raises(InputError) as ei:
            list(iter_jsonl(p))
        assert_names(ei.value, p, 2)
        assert "longer than 100 bytes" in ei.value.message

    def test_line_exactly_at_cap_is_fine(self):
        line = json.dumps({"a": "x" * 20})
        assert list(iter_jsonl(line + "\n", max_line_bytes=len(line))) == [(1, {"a": "x" * 20})]
        with pytest.raises(InputError):
            list(iter_jsonl(line + "\n", max_line_bytes=len(line) - 1))

    def test_invalid_utf8(self, tmp_path):
        p = tmp_path / "x.jsonl"
        p.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
        with pytest.raises(InputError) as ei:
            list(iter_jsonl(p))
        assert_names(ei.value, p, 2)
        assert "UTF-8" in ei.value.message

    def test_bom_and_gzip(self, tmp_path):
        p = tmp_path / "x.jsonl.gz"
        with gzip.open(p, "wb") as fh:
            fh.write(b'\xef\xbb\xbf{"a": 1}\n{"a": 2}')
        assert list(iter_jsonl(p)) == [(1, {"a": 1}), (2, {"a": 2})]

    def test_expand_paths(self, tmp_path):
        d = tmp_path / "runs"
        write(d / "b.jsonl", "")
        write(d / "a.jsonl", "")
        write(d / "notes.txt", "")
        f = write(tmp_path / "c.jsonl", "")
        assert expand_paths([d, str(f), '{"x": 1}']) == [d / "a.jsonl", d / "b.jsonl", f, '{"x": 1}']
        assert expand_paths(f) == [f]

    def test_expand_missing_path(self, tmp_path):
        with pytest.raises(InputError) as ei:
            expand_paths([tmp_path / "nope.jsonl"])
        assert_names(ei.value, tmp_path / "nope.jsonl", None)
        assert "no such file" in ei.value.message

    def test_expand_empty_directory(self, tmp_path):
        with pytest.raises(InputError) as ei:
            expand_paths(tmp_path)
        assert "no *.jsonl" in ei.value.message

    def test_json_document_errors_name_line(self, tmp_path):
        p = write(tmp_path / "x.json", '{\n  "a": 1,\n  "b": \n}\n')
        with pytest.raises(InputError) as ei:
            read_json_document(p)
        assert_names(ei.value, p, 4)

    def test_json_document_size_cap(self, tmp_path):
        p = write(tmp_path / "x.json", json.dumps({"a": "x" * 200}))
        with pytest.raises(InputError) as ei:
            read_json_document(p, max_bytes=100)
        assert "larger than 100 bytes" in ei.value.message


# --------------------------------------------------------------------------------------------- reports


class TestReports:
    def test_neuclir_dict_citations_keep_json_order(self):
        rec = neuclir(responses=[
            {"text": "First.", "citations": {"d3": 0.1, "d1": 0.9, "d2": 0.5}},
            {"text": "Second.", "citations": {}},
        ])
        [r] = read_reports(jl(rec))
        assert (r.run_id, r.request_id, r.team_id) == ("r1", "300", "t")
        assert [s.index for s in r.sentences] == [0, 1]
        assert r.sentences[0].citations == ("d3", "d1", "d2")
        assert r.sentences[1].citations == ()
        assert r.source == "<string>:1"

    def test_neuclir_list_citations_deduplicated_first_wins(self):
        rec = neuclir(responses=[{"text": "S.", "citations": ["d2", "d1", "d2", "d3", "d1"]}])
        [r] = read_reports(jl(rec))
        assert r.sentences[0].citations == ("d2", "d1", "d3")

    def test_sentences_never_resplit(self):
        rec = neuclir(responses=[{"text": "One. Two. Three.", "citations": []}])
        [r] = read_reports(jl(rec))
        assert len(r.sentences) == 1 and r.sentences[0].text == "One. Two. Three."

    def test_missing_citations_is_uncited(self):
        [r] = read_reports(jl(neuclir(responses=[{"text": "S."}, {"text": "T.", "citations": None}])))
        assert [s.citations for s in r.sentences] == [(), ()]

    def test_trec_rag_answer_with_index_citations(self):
        rec = {
            "metadata": {"run_id": "rag", "narrative_id": "2024-145979", "team_id": "x", "type": "automatic"},
            "references": ["msmarco_a", "msmarco_b", "msmarco_c"],
            "answer": [{"text": "A.", "citations": [2, 0, 2]}, {"text": "B.", "citations": []}],
        }
        [r] = read_reports(jl(rec))
        assert r.request_id == "2024-145979"
        assert r.sentences[0].citations == ("msmarco_c", "msmarco_a")
        assert r.sentences[1].citations == ()

    def test_trec_rag_topic_id_and_numeric_ids(self):
        rec = {"metadata": {"run_id": "rag", "topic_id": 42}, "references": ["d"],
               "answer": [{"text": "A.", "citations": [0]}]}
        [r] = read_reports(jl(rec))
        assert r.request_id == "42" and r.team_id is None and r.sentences[0].citations == ("d",)

    def test_mixed_string_and_index_citations(self):
        rec = neuclir(responses=[{"text": "S.", "citations": ["d9", 0, "d1"]}], references=["d1"])
        [r] = read_reports(jl(rec))
        assert r.sentences[0].citations == ("d9", "d1")

    @pytest.mark.parametrize("index", [3, -1])
    def test_index_out_of_range_names_sentence(self, tmp_path, index):
        rec = {"metadata": {"run_id": "rag", "narrative_id": "n1"}, "references": ["a", "b", "c"],
               "answer": [{"text": "ok", "citations": [0]}, {"text": "bad", "citations": [1, index]}]}
        p = write(tmp_path / "rag.jsonl", jl(neuclir(), rec))
        with pytest.raises(InputError) as ei:
            read_reports(p)
        assert_names(ei.value, p, 2)
        assert "answer[1].citations" in ei.value.message
        assert f"index {index}" in ei.value.message and "out of range" in ei.value.message

    def test_index_without_references(self, tmp_path):
        p = write(tmp_path / "r.jsonl", jl(neuclir(responses=[{"text": "S.", "citations": [0]}])))
        with pytest.raises(InputError) as ei:
            read_reports(p)
        assert_names(ei.value, p, 1)
        assert "no 'references'" in ei.value.message

    @pytest.mark.parametrize(
        ("mutate", "fragment"),
        [
            (lambda r: r["metadata"].pop("run_id"), "metadata.run_id"),
            (lambda r: r["metadata"].pop("topic_id"), "metadata.topic_id"),
            (lambda r: r.pop("metadata"), "'metadata'"),
            (lambda r: r.pop("responses"), "'responses'"),
            (lambda r: r["responses"][0].pop("text"), "responses[0].text"),
            (lambda r: r.__setitem__("metadata", ["x"]), "'metadata' must be an object"),
            (lambda r: r["metadata"].__setitem__("run_id", ["x"]), "metadata.run_id must be a string"),
            (lambda r: r["metadata"].__setitem__("run_id", ""), "metadata.run_id is empty"),
            (lambda r: r["metadata"].__setitem__("team_id", 7), "metadata.team_id must be a string"),
            (lambda r: r.__setitem__("responses", {"text": "x"}), "'responses' must be a list"),
            (lambda r: r["responses"].__setitem__(0, "just text"), "responses[0] must be an object"),
            (lambda r: r["responses"][0].__setitem__("text", 5), "responses[0].text must be a string"),
            (lambda r: r["responses"][0].__setitem__("citations", "d1"), "responses[0].citations must be"),
            (lambda r: r["responses"][0].__setitem__("citations", [True]), "found a boolean"),
            (lambda r: r["responses"][0].__setitem__("citations", [1.5]), "found a number"),
            (lambda r: r["responses"][0].__setitem__("citations", [""]), "empty document id"),
            (lambda r: r.__setitem__("references", "d1"), "'references' must be a list"),
            (lambda r: r.__setitem__("answer", []), "both 'responses' and 'answer'"),
        ],
    )
    def test_bad_fields_name_field_file_and_line(self, tmp_path, mutate, fragment):
        bad = neuclir(run="r2", responses=[{"text": "S.", "citations": ["d1"]}])
        mutate(bad)
        p = write(tmp_path / "run.jsonl", jl(neuclir(), bad))
        with pytest.raises(InputError) as ei:
            read_reports(p)
        assert_names(ei.value, p, 2)
        assert fragment in ei.value.message

    def test_references_entry_must_be_string(self, tmp_path):
        rec = {"metadata": {"run_id": "r", "narrative_id": "n"}, "references": [{"docid": "a"}],
               "answer": [{"text": "S.", "citations": [0]}]}
        p = write(tmp_path / "r.jsonl", jl(rec))
        with pytest.raises(InputError) as ei:
            read_reports(p)
        assert_names(ei.value, p, 1)
        assert "references[0]" in ei.value.message

    def test_duplicate_report_names_both_lines(self, tmp_path):
        p = write(tmp_path / "run.jsonl", jl(neuclir(topic="1"), neuclir(topic="2"), neuclir(topic="1")))
        with pytest.raises(InputError) as ei:
            read_reports(p)
        assert_names(ei.value, p, 3)
        assert f"{p}:1" in ei.value.message and "duplicate" in ei.value.message

    def test_duplicate_across_files(self, tmp_path):
        a = write(tmp_path / "runs" / "a.jsonl", jl(neuclir()))
        b = write(tmp_path / "runs" / "b.jsonl", jl(neuclir(topic="301"), neuclir()))
        with pytest.raises(InputError) as ei:
            read_reports(tmp_path / "runs")
        assert_names(ei.value, b, 2)
        assert f"{a}:1" in ei.value.message

    def test_same_request_different_runs_is_fine(self):
        reports = read_reports(jl(neuclir(run="a"), neuclir(run="b")))
        assert [r.key for r in reports] == [("a", "300"), ("b", "300")]

    def test_zero_sentences_is_legal(self):
        [r] = read_reports(jl(neuclir(responses=[])))
        assert r.sentences == ()

    def test_directory_and_sources_in_order(self, tmp_path):
        write(tmp_path / "runs" / "b.jsonl", jl(neuclir(run="b")))
        write(tmp_path / "runs" / "a.jsonl", jl(neuclir(run="a"), neuclir(run="a", topic="301")))
        reports = read_reports([tmp_path / "runs"])
        assert [r.key for r in reports] == [("a", "300"), ("a", "301"), ("b", "300")]
        assert reports[1].source == f"{tmp_path / 'runs' / 'a.jsonl'}:2"

    def test_missing_path(self, tmp_path):
        with pytest.raises(InputError) as ei:
            read_reports(str(tmp_path / "missing.jsonl"))
        assert_names(ei.value, tmp_path / "missing.jsonl", None)

    def test_malformed_json(self, tmp_path):
        p = write(tmp_path / "r.jsonl", jl(neuclir()) + '{"metadata": }\n')
        with pytest.raises(InputError) as ei:
            read_reports(p)
        assert_names(ei.value, p, 2)
        assert "column" in ei.value.message


# -------------------------------------------------------------------------------------------- requests


def request(rid: str = "300", **extra: object) -> dict:
    rec = {"request_id": rid, "title": "T", "background": "B", "problem_statement": "P", "limit": 2000,
           "collection_ids": ["neuclir/1/zho"]}
    rec.update(extra)
    return rec


class TestRequests:
    def test_basic_and_unknown_keys_ignored(self):
        reqs = read_requests(jl(request(), request("301", lang="zh", extra={"x": 1})))
        assert list(reqs) == ["300", "301"]
        r = reqs["300"]
        assert (r.title, r.background, r.problem_statement, r.limit, r.collection_ids) == (
            "T", "B", "P", 2000, ("neuclir/1/zho",))

    def test_optional_fields(self):
        rec = {"request_id": 7, "background": "", "problem_statement": "P"}
        r = read_requests(jl(rec))["7"]
        assert (r.title, r.limit, r.collection_ids) == (None, None, ())

    def test_duplicate_request_names_both_lines(self, tmp_path):
        p = write(tmp_path / "req.jsonl", jl(request(), request("301"), request()))
        with pytest.raises(InputError) as ei:
            read_requests(p)
        assert_names(ei.value, p, 3)
        assert f"{p}:1" in ei.value.message

    @pytest.mark.parametrize(
        ("rec", "fragment"),
        [
            ({"background": "B", "problem_statement": "P"}, "'request_id'"),
            ({"request_id": "1", "background": "B"}, "'problem_statement'"),
            ({"request_id": "1", "background": "B", "problem_statement": "P", "word_limit": -5}, "'word_limit'"),
            ({"request_id": "1", "background": 3, "problem_statement": "P"}, "'background' must be a string"),
            ({"request_id": "1", "background": "B", "problem_statement": "P", "limit": "2000"}, "'limit'"),
            ({"request_id": "1", "background": "B", "problem_statement": "P", "limit": True}, "'limit'"),
            ({"request_id": "1", "background": "B", "problem_statement": "P", "limit": 0}, "'limit'"),
            ({"request_id": "1", "background": "B", "problem_statement": "P", "title": 1}, "'title'"),
            ({"request_id": "1", "background": "B", "problem_statement": "P", "collection_ids": "c"},
             "'collection_ids'"),
            ({"request_id": "1", "background": "B", "problem_statement": "P", "collection_ids": [1]},
             "collection_ids[0]"),
        ],
    )
    def test_bad_fields(self, tmp_path, rec, fragment):
        p = write(tmp_path / "req.jsonl", jl(request("0"), rec))
        with pytest.raises(InputError) as ei:
            read_requests(p)
        assert_names(ei.value, p, 2)
        assert fragment in ei.value.message


# --------------------------------------------------------------------------------------------- nuggets


def nugget(qid: str, question: str, agg: str = "OR", answers: dict | None = None, **extra: object) -> dict:
    n = {"question": question, "question_id": qid, "aggregator_type": agg, "query_id": "300", "creator": "x",
         "answers": answers if answers is not None else {
             "yes": {"answer": "yes", "references": [{"doc_id": "d1"}, {"doc_id": "d2"}, {"doc_id": "d1"}]}}}
    n.update(extra)
    return n


def bank(query_id: str = "300", *nuggets: dict) -> dict:
    return {"query_id": query_id, "title_query": "t", "format_version": "v3",
            "nugget_bank": {n["question"]: n for n in nuggets}}


class TestNuggets:
    def test_parse_and_defaults(self):
        b = bank(
            "300",
            nugget("q1", "Who?"),
            nugget("q2", "Which ones?", "AND", answers={
                "a": {"answer": "a", "references": [{"doc_id": "d3"}]},
                "b": {"answer": "b", "references": []},
            }, importance="vital"),
            nugget("q3", "Is X missing?", absence=True, answers={}),
        )
        banks = read_nugget_banks(json.dumps(b))
        assert list(banks) == ["300"]
        n1, n2, n3 = banks["300"].nuggets
        assert (n1.nugget_id, n1.question, n1.aggregator, n1.importance, n1.absence) == (
            "q1", "Who?", "OR", "okay", False)
        assert n1.answers[0].text == "yes" and n1.answers[0].doc_ids == ("d1", "d2")
        assert (n2.aggregator, n2.importance, n2.weight) == ("AND", "vital", 2)
        assert [a.text for a in n2.answers] == ["a", "b"]
        assert n2.answers[1].doc_ids == ()  # empty references are legal
        assert n3.absence is True and n3.answers == ()

    def test_lowercase_aggregator_and_bare_string_references(self):
        b = bank("1", nugget("q", "Q?", "and", answers={"x": {"answer": "x", "references": ["d1"]}}))
        n = read_nugget_banks(json.dumps(b))["1"].nuggets[0]
        assert n.aggregator == "AND" and n.answers[0].doc_ids == ("d1",)

    def test_directory_of_files(self, tmp_path):
        write(tmp_path / "nuggets_2.v3.json", json.dumps(bank("2", nugget("a", "A?"))))
        write(tmp_path / "nuggets_1.v3.json", json.dumps(bank("1", nugget("b", "B?"))))
        write(tmp_path / "README.md", "not a bank")
        banks = read_nugget_banks(tmp_path)
        assert list(banks) == ["1", "2"]

    def test_missing_question_id_is_derived_like_autojudge(self, tmp_path):
        # a bank without question_id gets a stable id, the AutoJudge default (MD5 of the question text),
        # so judgments made by AutoJudge tools match ours. (Before, this was an input error.)
        bad = nugget("x", "What is the capital of Mars?")
        del bad["question_id"]
        p = write(tmp_path / "nuggets_300.v3.json", json.dumps(bank("300", nugget("ok", "Fine?"), bad)))
        first = read_nugget_banks(p)["300"].nuggets[1]
        assert first.nugget_id == hashlib.md5(b"What is the capital of Mars?").hexdigest()
        assert read_nugget_banks(p)["300"].nuggets[1].nugget_id == first.nugget_id  # stable across reads

    def test_bad_question_id_type_names_file_and_question(self, tmp_path):
        bad = nugget(["x"], "What is the capital of Mars?")
        p = write(tmp_path / "nuggets_300.v3.json", json.dumps(bank("300", nugget("ok", "Fine?"), bad)))
        with pytest.raises(InputError) as ei:
            read_nugget_banks(p)
        assert_names(ei.value, p, None)
        assert "What is the capital of Mars?" in ei.value.message and "question_id" in ei.value.message

    def test_bad_aggregator_lists_allowed_values(self, tmp_path):
        p = write(tmp_path / "n.json", json.dumps(bank("300", nugget("q", "Q?", "XOR"))))
        with pytest.raises(InputError) as ei:
            read_nugget_banks(p)
        assert_names(ei.value, p, None)
        assert "'XOR'" in ei.value.message and "OR, AND" in ei.value.message and "'Q?'" in ei.value.message

    @pytest.mark.parametrize(
        ("change", "fragment"),
        [
            ({"importance": "critical"}, "vital, okay"),
            ({"absence": "yes"}, "absence must be true or false"),
            ({"answers": 3}, "'answers' must be an object or a list"),
            ({"importance": 7}, "vital, okay"),
            ({"importance": "failed"}, "could not score it"),
            ({"sub_nuggets": [{"question": "Sub?"}]}, "sub_nuggets are not supported"),
            ({"answers": {"x": {"answer": "x", "references": [{"id": "d"}]}}}, "references[0]"),
            ({"answers": {"x": {"answer": "x", "references": "d"}}}, "'references' must be a list"),
            ({"answers": {"x": "d"}}, "answer 'x' must be an object"),
            ({"question_id": ["x"]}, "question_id must be a string"),
        ],
    )
    def test_bad_nugget_fields(self, tmp_path, change, fragment):
        n = nugget("q", "Why?")
        n.update(change)
        p = write(tmp_path / "n.json", json.dumps(bank("300", n)))
        with pytest.raises(InputError) as ei:
            read_nugget_banks(p)
        assert_names(ei.value, p, None)
        assert fragment in ei.value.message and "'Why?'" in ei.value.message

    def test_missing_aggregator_defaults_to_or(self, tmp_path):
        # banks without aggregator_type (AutoJudge, RAGTIME 26 make it optional) mean OR.
        n = nugget("q", "Why?")
        del n["aggregator_type"]
        d = nugget("d", "How?", "Default")
        p = write(tmp_path / "n.json", json.dumps(bank("300", n, d)))
        assert [x.aggregator for x in read_nugget_banks(p)["300"].nuggets] == ["OR", "OR"]

    def test_unsupported_aggregator_is_refused(self, tmp_path):
        p = write(tmp_path / "n.json", json.dumps(bank("300", nugget("q", "Why?", "SUM"))))
        with pytest.raises(InputError, match="aggregator_type.*OR, AND"):
            read_nugget_banks(p)

    @pytest.mark.parametrize(
        ("doc", "fragment"),
        [
            ([], "one JSON object"),
            ({"nugget_bank": {}}, "'query_id'"),
            ({"query_id": "1"}, "'nugget_bank'"),
            ({"query_id": "1", "nugget_bank": 3}, "'nugget_bank' must be an object"),
            (7, "one JSON object"),
        ],
    )
    def test_bad_bank(self, tmp_path, doc, fragment):
        p = write(tmp_path / "n.json", json.dumps(doc))
        with pytest.raises(InputError) as ei:
            read_nugget_banks(p)
        assert_names(ei.value, p, None)
        assert fragment in ei.value.message

    def test_duplicate_question_id(self, tmp_path):
        p = write(tmp_path / "n.json", json.dumps(bank("1", nugget("q", "A?"), nugget("q", "B?"))))
        with pytest.raises(InputError, match="question_id 'q'"):
            read_nugget_banks(p)

    def test_duplicate_bank_names_both_files(self, tmp_path):
        a = write(tmp_path / "a.json", json.dumps(bank("1", nugget("q", "A?"))))
        b = write(tmp_path / "b.json", json.dumps(bank("1", nugget("q", "A?"))))
        with pytest.raises(InputError) as ei:
            read_nugget_banks([a, b])
        assert_names(ei.value, b, None)
        assert str(a) in ei.value.message

    def test_malformed_json_names_line(self, tmp_path):
        p = write(tmp_path / "n.json", '{\n "query_id": "1",\n "nugget_bank": {,}\n}')
        with pytest.raises(InputError) as ei:
            read_nugget_banks(p)
        assert_names(ei.value, p, 3)


# ------------------------------------------------------------------------------------------- documents


def docs_jsonl(*ids: str, text: str = "body") -> str:
    return jl(*({"doc_id": i, "title": f"title {i}", "text": f"{text} {i}"} for i in ids))


class TestDocumentStore:
    def test_build_and_lookup(self, tmp_path):
        src = write(tmp_path / "docs.jsonl", docs_jsonl("a", "b", "c"))
        with DocumentStore.open(src, tmp_path / "idx") as store:
            assert store.built and len(store) == 3 and store.duplicates == 0
            doc = store.get("b")
            assert doc is not None and (doc.doc_id, doc.title, doc.text) == ("b", "title b", "body b")
            assert store.get("zzz") is None
            assert "a" in store and "zzz" not in store and 1 not in store
        assert store.index_path.parent == tmp_path / "idx"
        assert [p.name for p in (tmp_path / "idx").iterdir()] == [store.index_path.name]

    def test_reuse_does_not_rebuild(self, tmp_path):
        src = write(tmp_path / "docs.jsonl", docs_jsonl("a", "b"))
        first = DocumentStore.open(src, tmp_path / "idx")
        first.close()
        mtime = first.index_path.stat().st_mtime_ns
        with DocumentStore.open([str(src)], tmp_path / "idx") as second:
            assert not second.built
            assert second.index_path == first.index_path
            assert second.get("a") is not None and len(second) == 2
        assert first.index_path.stat().st_mtime_ns == mtime

    def test_rebuild_when_source_changes(self, tmp_path):
        src = write(tmp_path / "docs.jsonl", docs_jsonl("a", "b"))
        with DocumentStore.open(src, tmp_path / "idx") as first:
            assert first.get("c") is None
        write(src, docs_jsonl("a", "b", "c", text="new"))
        with DocumentStore.open(src, tmp_path / "idx") as second:
            assert second.built and second.index_path != first.index_path
            assert len(second) == 3 and second.get("c").text == "new c"

    def test_rebuild_when_a_source_is_added(self, tmp_path):
        a = write(tmp_path / "a.jsonl", docs_jsonl("a"))
        b = write(tmp_path / "b.jsonl", docs_jsonl("b"))
        idx = tmp_path / "idx"
        with DocumentStore.open([a], idx) as one, DocumentStore.open([a, b], idx) as two:
            assert one.index_path != two.index_path and len(two) == 2
        with DocumentStore.open([b, a], tmp_path / "idx") as again:  # order of sources does not matter
            assert not again.built and again.index_path == two.index_path

    def test_duplicates_keep_first_and_are_counted(self, tmp_path):
        a = write(tmp_path / "a.jsonl", docs_jsonl("x", "y", "x", text="first"))
        b = write(tmp_path / "b.jsonl", docs_jsonl("y", text="second"))
        with DocumentStore.open([a, b], tmp_path / "idx") as store:
            assert len(store) == 2 and store.duplicates == 2
            assert store.get("y").text == "first y"
        with DocumentStore.open([a, b], tmp_path / "idx") as store:  # the count survives reuse
            assert not store.built and store.duplicates == 2

    def test_aliases_and_null_title(self, tmp_path):
        src = write(tmp_path / "d.jsonl", jl(
            {"docid": "m1", "segment": "seg", "url": "u"},
            {"id": "p1", "contents": "pyserini"},
            {"doc_id": 5, "title": None, "text": "numeric id"},
        ))
        with DocumentStore.open(src, tmp_path / "idx") as store:
            assert store.get("m1").text == "seg" and store.get("m1").title is None
            assert store.get("p1").text == "pyserini"
            assert store.get("5").text == "numeric id"

    @pytest.mark.parametrize(
        ("bad", "fragment"),
        [
            ({"title": "t", "text": "x"}, "'doc_id'"),
            ({"doc_id": "b", "title": "t"}, "'text'"),
            ({"doc_id": "b", "text": ["x"]}, "'text' must be a string"),
            ({"doc_id": "b", "text": "x", "title": 3}, "'title' must be a string"),
            ({"doc_id": {"a": 1}, "text": "x"}, "doc_id must be a string"),
        ],
    )
    def test_bad_line_names_file_and_line_and_leaves_no_index(self, tmp_path, bad, fragment):
        src = write(tmp_path / "d.jsonl", docs_jsonl("a") + json.dumps(bad) + "\n")
        with pytest.raises(InputError) as ei:
            DocumentStore.open(src, tmp_path / "idx")
        assert_names(ei.value, src, 2)
        assert fragment in ei.value.message
        assert list((tmp_path / "idx").iterdir()) == []  # no half index, no stray temp file

    def test_malformed_json_line(self, tmp_path):
        src = write(tmp_path / "d.jsonl", docs_jsonl("a", "b") + '{"doc_id": "c", "text": \n')
        with pytest.raises(InputError) as ei:
            DocumentStore.open(src, tmp_path / "idx")
        assert_names(ei.value, src, 3)

    def test_interrupted_build_leaves_no_index(self, tmp_path, monkeypatch):
        from judge.formats import documents

        src = write(tmp_path / "d.jsonl", docs_jsonl("a", "b"))

        def boom(*args, **kwargs):
            raise KeyboardInterrupt

        monkeypatch.setattr(documents.os, "replace", boom)
        with pytest.raises(KeyboardInterrupt):
            DocumentStore.open(src, tmp_path / "idx")
        assert list((tmp_path / "idx").iterdir()) == []
        monkeypatch.undo()
        with DocumentStore.open(src, tmp_path / "idx") as store:
            assert store.built and len(store) == 2

    def test_corrupt_index_is_rebuilt(self, tmp_path):
        src = write(tmp_path / "d.jsonl", docs_jsonl("a"))
        with DocumentStore.open(src, tmp_path / "idx") as store:
            path = store.index_path
        path.write_bytes(b"not a database at all" * 100)
        with DocumentStore.open(src, tmp_path / "idx") as store:
            assert store.built and store.get("a") is not None

    def test_directory_gzip_and_literal_sources(self, tmp_path):
        d = tmp_path / "coll"
        write(d / "part1.jsonl", docs_jsonl("a"))
        with gzip.open(d / "part2.jsonl.gz", "wt", encoding="utf-8") as fh:
            fh.write(docs_jsonl("b"))
        with DocumentStore.open([d, docs_jsonl("c")], tmp_path / "idx") as store:
            assert len(store) == 3 and all(store.get(i) for i in "abc")

    def test_missing_source(self, tmp_path):
        with pytest.raises(InputError) as ei:
            DocumentStore.open(tmp_path / "nope.jsonl", tmp_path / "idx")
        assert_names(ei.value, tmp_path / "nope.jsonl", None)
        with pytest.raises(InputError, match="no document collection"):
            DocumentStore.open([], tmp_path / "idx")

    def test_concurrent_asyncio_lookups(self, tmp_path):
        ids = [f"d{i}" for i in range(200)]
        src = write(tmp_path / "d.jsonl", docs_jsonl(*ids))

        async def lookup(store: DocumentStore, doc_id: str) -> str:
            await asyncio.sleep(0)
            return store.get(doc_id).text

        async def main() -> list[str]:
            with DocumentStore.open(src, tmp_path / "idx") as store:
                return await asyncio.gather(*(lookup(store, i) for i in ids))

        assert asyncio.run(main()) == [f"body {i}" for i in ids]

    def test_batches_larger_than_one_insert(self, tmp_path, monkeypatch):
        from judge.formats import documents

        monkeypatch.setattr(documents, "_BATCH", 7)
        ids = [f"d{i}" for i in range(50)] + ["d3", "d49"]
        src = write(tmp_path / "d.jsonl", docs_jsonl(*ids))
        with DocumentStore.open(src, tmp_path / "idx") as store:
            assert len(store) == 50 and store.duplicates == 2


# ----------------------------------------------------------------------------------------- shared data


needs_shared = pytest.mark.skipif(not NEUCLIR.is_dir(), reason=f"shared data not found at {NEUCLIR}")


@needs_shared
class TestSharedData:
    def test_example_run(self, tmp_path):
        run = NEUCLIR / "example-run"
        reports = read_reports(run / "reports.jsonl")
        requests = read_requests(run / "requests.jsonl")
        assert len(reports) == 9 and len(requests) == 9
        assert {r.request_id for r in reports} == set(requests)
        assert {r.run_id for r in reports} == {"example-run-id"}
        assert sum(len(r.sentences) for r in reports) == 108
        first = reports[0]
        assert first.request_id == "300" and first.team_id == "example-team"
        assert first.sentences[0].citations == ("92cc4841-9dc4-4fb9-827d-1cc18c88cae0",)
        assert first.source == f"{run / 'reports.jsonl'}:1"
        assert requests["300"].title == "Japan suicide rate COVID-19" and requests["300"].limit == 2000

        cited = {c for r in reports for s in r.sentences for c in s.citations}
        with DocumentStore.open(run / "docs.jsonl", tmp_path / "docstore") as store:
            assert len(store) == 84 and store.duplicates == 0
            assert all(c in store for c in cited)  # every cited document is in the collection
            assert store.get("92cc4841-9dc4-4fb9-827d-1cc18c88cae0").text

    def test_zho_requests(self):
        requests = read_requests(NEUCLIR / "neuclir24-test-zho.requests.jsonl")
        assert len(requests) == 59
        assert requests["300"].collection_ids == ("neuclir/1/zho",)

    def test_all_nugget_banks(self):
        banks = read_nugget_banks(NEUCLIR / "nuggets")
        assert len(banks) == 12
        assert sorted(banks) == ["300", "303", "308", "309", "310", "324", "334", "335", "343", "351", "361",
                                 "387"]
        nuggets = [n for b in banks.values() for n in b.nuggets]
        assert len(nuggets) == 142
        assert sum(n.aggregator == "AND" for n in nuggets) == 21
        assert sum(len(n.answers) for n in nuggets) == 792
        assert sum(not a.doc_ids for n in nuggets for a in n.answers) == 44  # answers with no attesting doc
        assert len(banks["300"].nuggets) == 15


# ------------------------------------------------------------- every input format of the ecosystem

FORMATS = REPO_ROOT / "tests" / "data" / "formats"


def md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


class TestEcosystemRequests:
    def test_autojudge_topics_with_only_a_title(self):
        reqs = read_requests(FORMATS / "requests-autojudge.jsonl")
        r = reqs["28"]
        # The title is the whole information need: it becomes the problem statement (shown once in prompts).
        assert (r.problem_statement, r.title, r.background, r.limit) == ("my-topic number 28", None, "", None)
        assert list(reqs) == ["28", "29"]

    def test_rag25_narrative_and_word_limit(self):
        reqs = read_requests(FORMATS / "requests-rag25.jsonl")
        a, b = reqs["101"], reqs["102"]
        assert a.title == "coastal flood barriers" and a.problem_statement.startswith("I want to know who pays")
        assert (a.limit, a.limit_unit) == (None, "characters")
        assert b.problem_statement.startswith("What do heat pumps cost") and b.title is None
        assert (b.limit, b.limit_unit) == (250, "words")
        assert b.length_of("Heat pumps  cost\nless.") == 4 and a.length_of("Heat pumps") == 10

    @pytest.mark.parametrize(
        ("rec", "fragment"),
        [
            ({"request_id": "1"}, "give at least a title"),
            ({"request_id": "1", "title": "  "}, "give at least a title"),
            ({"request_id": "1", "title": "T", "limit": 10, "word_limit": 5}, "both 'limit'"),
            ({"request_id": "1", "topic_id": "2", "title": "T"}, "conflicting request ids"),
            ({"narrative_id": True, "title": "T"}, "narrative_id must be a string"),
            ({"request_id": "1", "narrative": 5}, "'narrative' must be a string"),
        ],
    )
    def test_bad_requests(self, tmp_path, rec, fragment):
        p = write(tmp_path / "req.jsonl", jl({"request_id": "0", "title": "ok"}, rec))
        with pytest.raises(InputError) as ei:
            read_requests(p)
        assert_names(ei.value, p, 2)
        assert fragment in ei.value.message


class TestEcosystemReports:
    def test_ragtime_request_id_and_confidences(self):
        (r,) = read_reports(FORMATS / "reports-ragtime.jsonl")
        assert (r.run_id, r.request_id, r.team_id) == ("ragtime-run", "300", "t1")
        assert r.sentences[0].citations == ("d2", "d1")  # JSON order kept; confidences carry no meaning here
        assert r.sentences[1].citations == ()

    def test_conflicting_ids_in_metadata(self, tmp_path):
        p = write(tmp_path / "r.jsonl", jl(neuclir(), {"metadata": {"run_id": "r", "topic_id": "300",
                                                                    "request_id": "301"}, "responses": []}))
        with pytest.raises(InputError) as ei:
            read_reports(p)
        assert_names(ei.value, p, 2)
        assert "conflicting request ids" in ei.value.message


class TestEcosystemNuggets:
    def test_multi_bank_jsonl_with_derived_ids_default_or_and_integer_importance(self):
        banks = read_nugget_banks(FORMATS / "nuggets-multi.jsonl")
        assert list(banks) == ["300", "301"]
        (n,) = banks["300"].nuggets
        assert (n.nugget_id, n.aggregator, n.importance) == (md5("How much did suicides rise in 2020?"), "OR", "vital")
        (m,) = banks["301"].nuggets
        assert (m.nugget_id, m.aggregator, m.importance) == ("301-q1", "AND", "okay")
        assert [(a.text, a.doc_ids) for a in m.answers] == [("the council", ("d7",)), ("a grant", ("d8",))]

    def test_ragtime26_list_shaped_bank(self):
        (bank,) = read_nugget_banks(FORMATS / "nuggets-ragtime26.jsonl").values()
        assert bank.request_id == "topic-1"
        first, second = bank.nuggets
        assert (first.aggregator, [a.doc_ids for a in first.answers]) == ("AND", [("doc-1",), ("doc-2", "doc-1")])
        assert (second.aggregator, second.importance, second.answers[0].doc_ids) == ("OR", "vital", ())

    def test_v2_items_merged_by_question(self):
        (bank,) = read_nugget_banks(FORMATS / "nuggets-items.v2.json").values()
        q1, q2 = bank.nuggets
        assert (q1.nugget_id, q1.importance, q1.aggregator) == ("300-q1", "vital", "OR")
        assert [(a.text, a.doc_ids) for a in q1.answers] == [("3.7%", ("d1",)), ("about 4 percent", ("d2",))]
        assert (q2.aggregator, [(a.text, a.doc_ids) for a in q2.answers]) == (
            "AND", [("women", ("d3",)), ("young people", ("d4",))])

    def test_items_with_conflicting_question_text_for_one_id(self, tmp_path):
        items = {"query_id": "1", "items": [{"question_id": "q", "question_text": "A?", "answer": "x"},
                                            {"question_id": "q", "question_text": "B?", "answer": "y"}]}
        p = write(tmp_path / "n.json", json.dumps(items))
        with pytest.raises(InputError, match="question_id 'q' is used by another nugget"):
            read_nugget_banks(p)

    def test_nuggetizer_text_nuggets(self):
        (bank,) = read_nugget_banks(FORMATS / "nuggetizer.jsonl").values()
        assert bank.request_id == "2024-145979"
        texts = [n.question for n in bank.nuggets]
        assert texts[0] == "Heat pumps move heat rather than generate it"
        assert [n.importance for n in bank.nuggets] == ["vital", "okay", "vital"]
        for n in bank.nuggets:  # the text is its own single answer, attested by no document
            assert n.nugget_id == md5(n.question) and [(a.text, a.doc_ids) for a in n.answers] == [(n.question, ())]

    def test_auto_argue_claim_bank(self):
        (bank,) = read_nugget_banks(FORMATS / "nuggets-claims.json").values()
        question, claim = bank.nuggets
        assert question.answers[0].doc_ids == ("doc123", "doc456")
        assert (claim.nugget_id, claim.question, claim.importance) == (
            md5("Machu Picchu lies at 2,430 metres."), "Machu Picchu lies at 2,430 metres.", "vital")
        assert [(a.text, a.doc_ids) for a in claim.answers] == [(claim.question, ("doc123",))]

    def test_autojudge_container(self):
        banks = read_nugget_banks(FORMATS / "nuggets-autojudge-container.json")
        assert list(banks) == ["28"] and banks["28"].nuggets[0].answers[0].doc_ids == ("224",)

    def test_json_file_holding_one_bank_per_line(self, tmp_path):
        p = write(tmp_path / "nuggets.json", (FORMATS / "nuggets-multi.jsonl").read_text())
        assert list(read_nugget_banks(p)) == ["300", "301"]

    def test_directory_mixing_layouts(self, tmp_path):
        for name in ("nuggets-multi.jsonl", "nuggetizer.jsonl", "nuggets-claims.json"):
            write(tmp_path / name, (FORMATS / name).read_text())
        assert sorted(read_nugget_banks(tmp_path)) == ["2024-145979", "300", "301", "ex-1"]

    def test_duplicate_bank_across_lines_names_both(self, tmp_path):
        line = (FORMATS / "nuggets-multi.jsonl").read_text().splitlines()[0]
        p = write(tmp_path / "n.jsonl", line + "\n" + line + "\n")
        with pytest.raises(InputError) as ei:
            read_nugget_banks(p)
        assert_names(ei.value, p, 2)
        assert f"{p}:1" in ei.value.message

    @pytest.mark.parametrize(
        ("doc", "fragment"),
        [
            ({"qid": "1", "nuggets": [{"importance": "vital"}]}, "nuggets[0]: 'text'"),
            ({"qid": "1", "nuggets": {"text": "x"}}, "'nuggets' must be a list"),
            ({"query": "q", "nuggets": []}, "'qid'"),
            ({"items": [{"question_text": "Q?", "answer": "a"}]}, "'query_id'"),
            ({"query_id": "1", "items": [{"answer": "a"}]}, "items[0]: 'question_text'"),
            ({"query_id": "1", "claim_bank": [{"references": ["d"]}]}, "'claim' must be a non-empty string"),
            ({"metadata": {"run_id": "r"}, "nugget_bank": []}, "'metadata.topic_id'"),
            ({"query_id": "1", "nugget_bank": [{"question": "Q?", "importance": "vital"},
                                               {"question": "Q?", "importance": "okay"}]}, "different importance"),
        ],
    )
    def test_bad_ecosystem_banks(self, tmp_path, doc, fragment):
        p = write(tmp_path / "n.jsonl", jl({"qid": "ok", "nuggets": []}, doc))
        with pytest.raises(InputError) as ei:
            read_nugget_banks(p)
        assert_names(ei.value, p, 2)
        assert fragment in ei.value.message


def _as_bom(text: str) -> bytes:
    return b"\xef\xbb\xbf" + text.encode("utf-8")


READERS = [
    ("requests-rag25.jsonl", read_requests),
    ("reports-ragtime.jsonl", read_reports),
    ("nuggets-multi.jsonl", read_nugget_banks),
    ("nuggets-items.v2.json", read_nugget_banks),
    ("nuggetizer.jsonl", read_nugget_banks),
    ("nuggets-claims.json", read_nugget_banks),
]


class TestGzipAndBomEverywhere:
    @pytest.mark.parametrize(("name", "reader"), READERS)
    @pytest.mark.parametrize("variant", ["gz", "bom", "bom+gz"])
    def test_same_result(self, tmp_path, name, reader, variant):
        text = (FORMATS / name).read_text(encoding="utf-8")
        raw = _as_bom(text) if "bom" in variant else text.encode("utf-8")
        target = tmp_path / (name + ".gz" if "gz" in variant else name)
        target.write_bytes(gzip.compress(raw) if "gz" in variant else raw)
        got, want = reader(target), reader(FORMATS / name)
        if reader is read_reports:  # a report remembers its file; compare everything else
            got, want = ([r.model_copy(update={"source": None}) for r in x] for x in (got, want))
        assert got == want

    def test_documents_with_docno_bom_and_gz(self, tmp_path):
        text = (FORMATS / "docs-irds.jsonl").read_text()
        (tmp_path / "c.jsonl.gz").write_bytes(gzip.compress(_as_bom(text)))
        with DocumentStore.open(tmp_path / "c.jsonl.gz", tmp_path / "idx") as store:
            assert len(store) == 2 and store.get("224").text.startswith("linear theory")


# ---------------------------------------------------------- inputs that used to crash or say nothing


class TestHostileInputs:
    @pytest.mark.parametrize(
        ("line", "fragment"),
        [
            ('{"a": "x\\ud800y"}', "field 'a' contains a lone UTF-16 surrogate (\\ud800)"),
            ('{"a": [{"b": "\\udfff"}]}', "field 'a[0].b'"),
            ('{"\\ud800": 1}', "field name contains a lone UTF-16 surrogate"),
            ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
            ('{"a": ' + "9" * 5000 + "}", "more than 4,300 digits"),
        ],
    )
    def test_line_errors(self, tmp_path, line, fragment):
        p = write(tmp_path / "x.jsonl", '{"ok": 1}\n' + line + "\n")
        with pytest.raises(InputError) as ei:
            list(iter_jsonl(p))
        assert_names(ei.value, p, 2)
        assert fragment in ei.value.message

    def test_surrogate_pairs_are_fine(self):
        assert list(iter_jsonl('{"a": "\\ud83d\\ude00"}')) == [(1, {"a": "\U0001f600"})]

    def test_literal_text_with_a_lone_surrogate(self):
        with pytest.raises(InputError, match="not valid UTF-8"):
            list(iter_jsonl('{"a": "\ud800"}\n'))

    def test_surrogate_in_a_document_stops_the_index_build(self, tmp_path):
        p = write(tmp_path / "d.jsonl", '{"doc_id": "a", "text": "ok"}\n{"doc_id": "b", "text": "bad \\udc80"}\n')
        with pytest.raises(InputError) as ei:
            DocumentStore.open(p, tmp_path / "idx")
        assert_names(ei.value, p, 2)
        assert not list((tmp_path / "idx").glob("*.tmp")) and not list((tmp_path / "idx").glob(".*.tmp"))

    @pytest.mark.parametrize("reader", [iter_jsonl, read_json_document])
    def test_corrupt_gzip(self, tmp_path, reader):
        raw = gzip.compress(b'{"a": 1}\n' * 2000)
        p = tmp_path / "x.jsonl.gz"
        p.write_bytes(raw[:30] + bytes(b ^ 0x5A for b in raw[30:60]) + raw[60:])
        with pytest.raises(InputError) as ei:
            result = reader(p)
            list(result) if reader is iter_jsonl else result
        assert ei.value.path == str(p) and "compressed file is corrupt or truncated" in ei.value.message

    def test_utf16_file_is_named(self, tmp_path):
        p = tmp_path / "r.jsonl"
        p.write_bytes('{"a": 1}\n'.encode("utf-16"))
        with pytest.raises(InputError, match="UTF-16 encoded; save it as UTF-8"):
            list(iter_jsonl(p))

    @pytest.mark.parametrize("reader", [read_reports, read_requests, read_nugget_banks])
    def test_empty_files_are_input_errors(self, tmp_path, reader):
        p = write(tmp_path / "empty.jsonl", "\n  \n")
        with pytest.raises(InputError) as ei:
            reader(p)
        assert_names(ei.value, p, None)
        assert "empty" in ei.value.message


class TestInputWarnings:
    def test_clean_inputs_give_no_warning(self, tmp_path):
        store = DocumentStore.open(write(tmp_path / "d.jsonl", jl({"doc_id": "d1", "text": "x"})), tmp_path / "i")
        assert input_warnings(read_reports(jl(neuclir(responses=[{"text": "A.", "citations": ["d1"]}]))), store) == []

    def test_empty_documents_file_and_empty_collection(self, tmp_path):
        empty = write(tmp_path / "empty.jsonl", "")
        store = DocumentStore.open(empty, tmp_path / "i")
        reports = read_reports(jl(neuclir(responses=[{"text": "A.", "citations": ["d1", "d2"]}])))
        notes = input_warnings(reports, store)
        assert notes[0] == f"{empty}: the documents file holds no documents"
        assert "collection is empty: all 2 cited document ids are unknown" in notes[1] and len(notes) == 2

    def test_every_citation_unknown(self, tmp_path):
        store = DocumentStore.open(write(tmp_path / "d.jsonl", jl({"doc_id": "z", "text": "x"})), tmp_path / "i")
        reports = read_reports(jl(neuclir(responses=[{"text": "A.", "citations": ["d1", "d2", "d3", "d4"]}])))
        (note,) = input_warnings(reports, store)
        assert note.startswith("none of the 4 cited document ids is in the document collection (e.g. 'd1', 'd2', "
                               "'d3', ...)")

    def test_some_citations_unknown(self, tmp_path):
        store = DocumentStore.open(write(tmp_path / "d.jsonl", jl({"doc_id": "d1", "text": "x"})), tmp_path / "i")
        reports = read_reports(jl(neuclir(responses=[{"text": "A.", "citations": ["d1", "d9"]}])))
        assert input_warnings(reports, store) == [
            "1 of 2 cited document ids are not in the document collection (e.g. 'd9'); citations of them cannot "
            "support their sentences"]
