"""The nugget calls and calibrate take domain objects (and dicts in their file format) where they take files: the
objects go in as they are, no temporary file is written, and the result is the one of the files they came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import judge
from judge.formats import read_nugget_banks, read_reports, read_requests
from judge.testing import FakeEndpoint, smart_responder
from judge.types import Document
from tests.test_api_inputs import _no_temporary_files

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DOC_LINES = (EXAMPLES / "docs.jsonl").read_text(encoding="utf-8").splitlines()


def _documents() -> list[Document]:
    return [Document(**json.loads(line)) for line in DOC_LINES]


def _banks():
    return list(read_nugget_banks(EXAMPLES / "nuggets").values())


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith(".argue")}


@pytest.fixture
def fake_model():
    with FakeEndpoint(smart_responder) as endpoint:
        yield {"model": "openai/fake", "api_base": endpoint.api_base, "api_key": "none", "cache": None}


def test_calibrate_on_banks_and_documents_in_memory_writes_what_the_files_give(tmp_path, monkeypatch, fake_model):
    on_files = judge.calibrate(nuggets=EXAMPLES / "nuggets", docs=EXAMPLES / "docs.jsonl", n_boot=50,
                               out=tmp_path / "files", **fake_model)
    _no_temporary_files(monkeypatch)
    on_objects = judge.calibrate(nuggets=_banks(), docs=_documents(), n_boot=50, out=tmp_path / "objects",
                                 **fake_model)
    assert on_objects.decisions["answers_nugget"].n == on_files.decisions["answers_nugget"].n > 0
    assert (tmp_path / "objects" / "calibration.json").read_bytes() == \
        (tmp_path / "files" / "calibration.json").read_bytes()


def test_calibrate_reads_dicts_as_lines_of_their_files(tmp_path, fake_model):
    on_files = judge.calibrate(nuggets=EXAMPLES / "nuggets", docs=EXAMPLES / "docs.jsonl", n_boot=50, **fake_model)
    banks = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((EXAMPLES / "nuggets").glob("*.json"))]
    on_dicts = judge.calibrate(nuggets=banks, docs=[json.loads(line) for line in DOC_LINES], n_boot=50, **fake_model)
    assert on_dicts.decisions["answers_nugget"] == on_files.decisions["answers_nugget"]


def test_calibrate_refuses_a_document_among_the_banks_naming_it(fake_model):
    with pytest.raises(TypeError, match=r"^nuggets\[0\]: a Document where a NuggetBank"):
        judge.calibrate(nuggets=_documents(), docs=_documents(), **fake_model)


@pytest.fixture(scope="module")
def nugget_model():
    from judge.testing.nugget_responders import nugget_responder

    with FakeEndpoint(nugget_responder) as endpoint:
        yield {"model": "openai/fake", "api_base": endpoint.api_base, "api_key": "none"}


def _summary(path: Path) -> dict:
    summary = json.loads(path.read_text(encoding="utf-8"))
    summary.pop("seconds", None)   # wall time: the one field two equal runs do not share
    return summary


def test_create_nuggets_on_objects_writes_the_banks_the_files_give(tmp_path, monkeypatch, nugget_model):
    """Requests, documents and gold reports in memory: the same banks, review and summary as their files, no
    temporary file and no document index on disk."""
    files, objects = tmp_path / "files", tmp_path / "objects"
    on_files = judge.create_nuggets(requests=EXAMPLES / "requests.jsonl", docs=EXAMPLES / "docs.jsonl",
                                    gold_report=EXAMPLES / "gold", out=files / "banks", max_nuggets=3,
                                    cache=files / "cache", **nugget_model)
    _no_temporary_files(monkeypatch)
    on_objects = judge.create_nuggets(requests=list(read_requests(EXAMPLES / "requests.jsonl").values()),
                                      docs=_documents(), gold_report=read_reports(EXAMPLES / "gold"),
                                      out=objects / "banks", max_nuggets=3, cache=objects / "cache", **nugget_model)
    assert on_objects.banks == on_files.banks and on_objects.review == on_files.review
    written = sorted(p.name for p in (objects / "banks").iterdir() if not p.name.startswith(".argue"))
    assert written == sorted(p.name for p in (files / "banks").iterdir() if not p.name.startswith(".argue"))
    assert _files(objects / "banks") == _files(files / "banks")
    assert (objects / "banks.review.jsonl").read_bytes() == (files / "banks.review.jsonl").read_bytes()
    assert _summary(objects / "banks.summary.json") == _summary(files / "banks.summary.json")
    assert (files / "cache" / "docstore").exists() and not (objects / "cache" / "docstore").exists()


def test_create_nuggets_reads_dicts_and_a_generator_as_their_lines(nugget_model):
    requests = [json.loads(line) for line in (EXAMPLES / "requests.jsonl").read_text(encoding="utf-8").splitlines()]
    on_files = judge.create_nuggets(requests=EXAMPLES / "requests.jsonl", docs=EXAMPLES / "docs.jsonl",
                                    max_nuggets=3, cache=None, **nugget_model)
    on_dicts = judge.create_nuggets(requests=requests, docs=(json.loads(line) for line in DOC_LINES),
                                    max_nuggets=3, cache=None, **nugget_model)
    assert on_dicts.banks == on_files.banks and on_dicts.signature == on_files.signature


POOLED_REPORT = {"metadata": {"run_id": "run-pool", "topic_id": "ex-101"}, "responses": [
    {"text": "Construction of the Marrowick flood barrier began in late 2020.", "citations": ["ex-planted"]},
    {"text": "Construction of the Marrowick flood barrier began in June 2019.", "citations": ["ex-d01"]}]}
PLANTED_DOC = {"doc_id": "ex-planted", "title": "Survey crews at the quay",
               "text": "Preparatory construction of the Marrowick flood barrier began in late 2020, when survey "
                       "crews drilled the quay."}


def test_pool_and_accept_on_objects_write_what_the_files_give(tmp_path, monkeypatch, nugget_model):
    """Banks, reports, requests and documents in memory pool the candidates their files pool; accepting them into
    banks given as objects, or as dicts, writes the banks the files give."""
    docs, reports = tmp_path / "docs.jsonl", tmp_path / "reports.jsonl"
    docs.write_text("\n".join([*DOC_LINES, json.dumps(PLANTED_DOC)]) + "\n", encoding="utf-8")
    reports.write_text(json.dumps(POOLED_REPORT) + "\n", encoding="utf-8")
    files, objects = tmp_path / "files", tmp_path / "objects"
    on_files = judge.pool_nuggets(nuggets=EXAMPLES / "nuggets", reports=reports, requests=EXAMPLES / "requests.jsonl",
                                  docs=docs, out=files / "candidates.jsonl", cache=files / "cache", **nugget_model)
    _no_temporary_files(monkeypatch)
    on_objects = judge.pool_nuggets(nuggets=_banks(), reports=read_reports(reports),
                                    requests=list(read_requests(EXAMPLES / "requests.jsonl").values()),
                                    docs=[*_documents(), Document(**PLANTED_DOC)], out=objects / "candidates.jsonl",
                                    cache=objects / "cache", **nugget_model)
    assert on_objects.candidates == on_files.candidates != []
    for name in ("candidates.jsonl", "candidates.jsonl.refused.jsonl"):
        assert (objects / name).read_bytes() == (files / name).read_bytes()
    assert not (objects / "cache" / "docstore").exists()

    reviewed = tmp_path / "reviewed.jsonl"
    reviewed.write_text("".join(json.dumps({**c, "accept": True}) + "\n" for c in on_files.candidates),
                        encoding="utf-8")
    from_files = judge.accept_candidates(nuggets=EXAMPLES / "nuggets", candidates=reviewed, out=tmp_path / "a")
    from_objects = judge.accept_candidates(nuggets=_banks(), candidates=reviewed, out=tmp_path / "b")
    bank_dicts = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((EXAMPLES / "nuggets").glob("*.json"))]
    from_dicts = judge.accept_candidates(nuggets=bank_dicts, candidates=reviewed, out=tmp_path / "c")
    assert from_objects == from_dicts == from_files
    assert _files(tmp_path / "b") == _files(tmp_path / "c") == _files(tmp_path / "a") != {}


def test_accept_keeps_the_provenance_a_bank_dict_records(tmp_path, nugget_model):
    """Banks written by `create_nuggets` record each answer as `created`: given as dicts, they keep it, as their
    files do."""
    created = judge.create_nuggets(requests=EXAMPLES / "requests.jsonl", docs=EXAMPLES / "docs.jsonl",
                                   out=tmp_path / "banks", max_nuggets=2, cache=None, **nugget_model)
    reviewed = tmp_path / "reviewed.jsonl"
    reviewed.write_text("", encoding="utf-8")
    from_files = judge.accept_candidates(nuggets=tmp_path / "banks", candidates=reviewed, out=tmp_path / "a")
    bank_dicts = [json.loads(p.read_text(encoding="utf-8")) for p in created.written if p.suffix == ".json"]
    from_dicts = judge.accept_candidates(nuggets=bank_dicts, candidates=reviewed, out=tmp_path / "b")
    assert from_dicts == from_files
    assert _files(tmp_path / "b") == _files(tmp_path / "a")
    assert b'"created"' in b"".join(_files(tmp_path / "b").values())


def test_an_object_input_is_no_input_file_an_output_collides_with(tmp_path, nugget_model):
    """Only paths are inputs an output must keep apart from: banks given as objects leave their folder free."""
    folder = tmp_path / "nuggets"
    folder.mkdir()
    for bank in (EXAMPLES / "nuggets").glob("*.json"):
        (folder / bank.name).write_bytes(bank.read_bytes())
    reviewed = tmp_path / "reviewed.jsonl"
    reviewed.write_text("", encoding="utf-8")
    from judge.errors import InputError

    with pytest.raises(InputError):
        judge.accept_candidates(nuggets=folder, candidates=reviewed, out=folder / "out")
    judge.accept_candidates(nuggets=read_nugget_banks(folder).values(), candidates=reviewed, out=folder / "out")
    assert sorted(p.name for p in (folder / "out").glob("*.json")) == sorted(p.name for p in folder.glob("*.json"))
