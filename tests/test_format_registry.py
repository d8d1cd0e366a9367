"""judge.formats.registry: a format is one module that registers itself; the readers, the "this is X, not Y"
refusals, the command line's help and the docs' table all read the registry; writers round-trip through readers."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

from judge.errors import InputError
from judge.formats import read_nugget_banks, read_reports, read_requests, registry
from judge.formats.documents import DocumentStore
from judge.formats.sniff import naming_the_format
from judge.types import Answer, Document, Nugget, NuggetBank, Report, Request, Sentence

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

TOY_MODULE = '''
"""Toy reports: {"toy_run", "toy_topic", "lines": [[text, doc_id, ...], ...]}, one per line."""

from judge.errors import InputError
from judge.formats.registry import Format, register
from judge.types import Report, Sentence


def _detect(record):
    return "toy_run" in record


def _parse(record, name, line):
    if not isinstance(record.get("lines"), list):
        raise InputError("missing field 'lines' (a list of [text, doc_id, ...])", name, line)
    sentences = tuple(Sentence(index=i, text=row[0], citations=tuple(row[1:])) for i, row in enumerate(record["lines"]))
    return [Report(run_id=record["toy_run"], request_id=record["toy_topic"], sentences=sentences,
                   source=f"{name}:{line}")]


FORMAT = register(Format("toy-report", "reports", "toy reports: {toy_run, toy_topic, lines}", _detect, _parse,
                         what="a toy reports file", use="give it as the reports"))
'''


@pytest.fixture
def toy_format(tmp_path, monkeypatch):
    """The toy format's module, written to a folder of its own and imported: its import registers the format."""
    (tmp_path / "toy_reports.py").write_text(textwrap.dedent(TOY_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("toy_reports")
    yield module.FORMAT
    registry.unregister("toy-report")
    sys.modules.pop("toy_reports", None)


def test_a_format_of_ones_own_is_one_module_read_by_the_public_reader(toy_format, tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"toy_run": "mine", "toy_topic": "ex-101", "lines": [["The barrier opened.", "ex-d01"]]}\n'
                    '{"metadata": {"run_id": "other", "topic_id": "ex-101"}, "responses": [{"text": "A."}]}\n',
                    encoding="utf-8")
    toy, neuclir = read_reports(runs)
    assert (toy.run_id, toy.request_id, toy.sentences[0].citations, toy.source) == ("mine", "ex-101", ("ex-d01",),
                                                                                      f"{runs}:1")
    assert neuclir.run_id == "other"                      # the built-in formats still read their records
    runs.write_text('{"toy_run": "mine", "toy_topic": "ex-101"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"runs\.jsonl:1: missing field 'lines'"):
        read_reports(runs)
    # what the registry lists, the docs' table and the command line's help list too
    assert "toy-report" in registry.table() and "toy reports" in registry.listing("reports")


def test_a_file_of_a_registered_format_is_named_when_another_input_is_wanted(toy_format, tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"toy_run": "mine", "toy_topic": "ex-101", "lines": []}\n', encoding="utf-8")
    with pytest.raises(InputError) as refused, naming_the_format("a requests file"):
        read_requests(runs)
    assert str(refused.value) == f"{runs}: this is a toy reports file, not a requests file: give it as the reports"


def test_a_dict_in_a_registered_format_is_read_by_the_api(toy_format):
    import judge

    scored = judge.baseline("pa-bleu", [{"toy_run": "mine", "toy_topic": "ex-101", "lines": [["The barrier.", "d1"]]}],
                            gold=[{"toy_run": f"gold-{n}", "toy_topic": "ex-101", "lines": [["The barrier."]]}
                                  for n in (1, 2)])
    assert {row.run_id for row in scored.rows} == {"mine"}
    with pytest.raises(ValueError, match=r"^reports\[0\]: missing field 'lines'"):
        judge.baseline("pa-bleu", [{"toy_run": "mine", "toy_topic": "ex-101"}], gold=[REPORT])


def test_every_input_option_help_and_the_docs_table_come_from_the_registry():
    from judge.cli import options

    for fmt in registry.formats("nuggets"):
        assert fmt.title in options.NUGGET_FORMATS
    for kind, listed in (("reports", options.REPORT_FORMATS), ("requests", options.REQUEST_FORMATS),
                         ("documents", options.DOCUMENT_FORMATS)):
        assert listed == registry.listing(kind) and all(f.title in listed for f in registry.formats(kind))
    assert "<!-- format-table -->" in (ROOT / "docs" / "inputs.md").read_text(encoding="utf-8")
    rows = registry.table().splitlines()[2:]
    assert [row.split("`")[1] for row in rows] == [f.name for k in registry.KINDS for f in registry.formats(k)]


REPORT = Report(run_id="r1", request_id="q1", team_id="t", sentences=(
    Sentence(index=0, text="One.", citations=("d1", "d2")), Sentence(index=1, text="Two.")))
REQUEST = Request(request_id="q1", title="T", background="B", problem_statement="P", limit=250, limit_unit="words",
                  collection_ids=("c",))
DOCUMENT = Document(doc_id="d1", title=None, text="Text.")
BANK = NuggetBank(request_id="q1", nuggets=(
    Nugget(nugget_id="n1", question="Who?", aggregator="AND", importance="vital",
           answers=(Answer(text="A", doc_ids=("d1",)), Answer(text="B"))),
    Nugget(nugget_id="n2", question="Is it known?", absence=True, answers=(Answer(text="No"),))))


@pytest.mark.parametrize(("name", "kind", "obj"), [
    ("neuclir-report", "reports", REPORT), ("neuclir-request", "requests", REQUEST),
    ("jsonl-documents", "documents", DOCUMENT), ("v3-nuggets", "nuggets", BANK)])
def test_a_written_record_reads_back_as_the_object(name, kind, obj):
    import json

    record = json.loads(json.dumps(registry.writer(name)(obj)))
    found = registry.parse(kind, record, "x", 1)
    assert len(found) == 1
    back = found[0].model_copy(update={"source": None}) if isinstance(obj, Report) else found[0]
    assert back == obj
    assert registry.detect(record, kind).name == name


def test_every_module_of_the_known_formats_registers_one_format_with_a_line_of_its_own():
    from judge.formats import known

    modules = [p for p in Path(known.__file__).parent.glob("*.py") if p.name != "__init__.py"]
    names = [f.name for f in registry.formats()]
    assert len(names) == len(set(names)) == len(modules)
    assert {f.detect.__module__ for f in registry.formats()} == {f"judge.formats.known.{p.stem}" for p in modules}
    assert all(f.description and f.use for f in registry.formats())
    assert read_nugget_banks(EXAMPLES / "nuggets") and read_requests(EXAMPLES / "requests.jsonl")


def test_documents_in_memory_are_looked_up_sized_and_deduplicated_as_a_collection():
    store = DocumentStore.of([DOCUMENT, Document(doc_id="d2", text="x" * 50), Document(doc_id="d1", text="copy")],
                             "docs")
    with store:
        assert (len(store), store.duplicates, store.get("d1"), "d2" in store) == (2, 1, DOCUMENT, True)
        with pytest.raises(InputError, match=r"^docs\[1\]: document 'd2' is 50 bytes, over --max-doc-bytes 10"):
            store.check_sizes(["d1", "d2"], 10)
