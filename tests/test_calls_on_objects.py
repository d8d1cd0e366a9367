"""The nugget calls and calibrate take domain objects (and dicts in their file format) where they take files: the
objects go in as they are, no temporary file is written, and the result is the one of the files they came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import judge
from judge.formats import read_nugget_banks
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
