"""Label sources -> calibration items: inline data for each importer, every error path, sampling, real files."""

from __future__ import annotations

import collections
import json
import os
from pathlib import Path

import pytest

from judge.calibration.importers import (
    CalibrationItem,
    items_from_nugget_banks,
    read_attributionbench,
    read_wice,
    stratified_sample,
)
from judge.errors import InputError
from judge.types import Answer, Document, Nugget, NuggetBank

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ARGUE_SHARED_DATA", REPO.parent / "shared" / "data"))


def _jsonl(*objs) -> str:
    return "\n".join(o if isinstance(o, str) else json.dumps(o) for o in objs) + "\n"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- AttributionBench ----------------------------------------------------------------------------------------------

AB = [
    {"id": "a1", "question": "q?", "claim": "Milira sings it.", "references": ["Doc one."],
     "attribution_label": "attributable", "src_dataset": "AttributedQA"},
    {"id": "a2", "claim": "Two docs.", "references": ["First.", "Second."],
     "attribution_label": "not attributable", "src_dataset": "ExpertQA"},
    {"id": 3, "claim": "Int id.", "references": ["x"], "attribution_label": "Not_Attributable",
     "src_dataset": "LFQA"},
]


def test_attributionbench_inline():
    items = read_attributionbench(_jsonl(*AB))
    assert [i.item_id for i in items] == ["a1", "a2", "3"]
    assert [i.human_label for i in items] == ["supported", "not_supported", "not_supported"]
    assert [i.group for i in items] == ["AttributedQA", "ExpertQA", "LFQA"]
    assert all(i.decision == "supports_citation" for i in items)
    assert items[1].documents == ["First.", "Second."]
    assert items[0].claim == "Milira sings it." and items[0].extra["question"] == "q?"


@pytest.mark.parametrize("line, message", [
    ("{not json", "malformed JSON at column 2"),
    ("[1, 2]", "expected a JSON object"),
    ({"claim": "c", "references": ["d"], "attribution_label": "attributable", "src_dataset": "s"}, "'id'"),
    ({"id": "x", "references": ["d"], "attribution_label": "attributable", "src_dataset": "s"}, "'claim'"),
    ({"id": "x", "claim": "c", "attribution_label": "attributable", "src_dataset": "s"}, "'references'"),
    ({"id": "x", "claim": "c", "references": "d", "attribution_label": "attributable", "src_dataset": "s"},
     "list of strings"),
    ({"id": "x", "claim": "c", "references": [], "attribution_label": "attributable", "src_dataset": "s"},
     "is empty"),
    ({"id": "x", "claim": "c", "references": [1], "attribution_label": "attributable", "src_dataset": "s"},
     "references[0]"),
    ({"id": "x", "claim": "c", "references": ["d"], "src_dataset": "s"}, "'attribution_label'"),
    ({"id": "x", "claim": "c", "references": ["d"], "attribution_label": "maybe", "src_dataset": "s"}, "maybe"),
    ({"id": "x", "claim": "c", "references": ["d"], "attribution_label": "attributable"}, "'src_dataset'"),
    ({"id": None, "claim": "c", "references": ["d"], "attribution_label": "attributable", "src_dataset": "s"},
     "'id'"),
    ({"id": "a1", "claim": "c", "references": ["d"], "attribution_label": "attributable", "src_dataset": "s"},
     "already used on line 1"),
])
def test_attributionbench_errors_name_file_and_line(tmp_path, line, message):
    path = _write(tmp_path, "ab.jsonl", _jsonl(AB[0], "", line))  # blank line 2: the bad record is line 3
    with pytest.raises(InputError) as exc:
        read_attributionbench(path)
    assert exc.value.path == str(path) and exc.value.line == 3
    assert message in exc.value.message
    assert str(exc.value).startswith(f"{path}:3: ")


def test_missing_file_is_named(tmp_path):
    with pytest.raises(InputError) as exc:
        read_attributionbench(tmp_path / "nope.jsonl")
    assert exc.value.path == str(tmp_path / "nope.jsonl")


def test_literal_text_errors_name_string():
    with pytest.raises(InputError) as exc:
        read_wice(_jsonl({"claim": "c", "evidence": ["e"], "label": "supported"}, "{oops"))
    assert exc.value.path == "<string>" and exc.value.line == 2


# --- WiCE ---------------------------------------------------------------------------------------------------------

WICE = [
    {"label": "supported", "claim": "C1.", "evidence": ["s1", "s2"], "supporting_sentences": [[0]],
     "meta": {"id": "w1", "claim_title": "T"}},
    {"label": "partially_supported", "claim": "C2.", "evidence": ["s3"], "meta": {"id": "w2"}},
    {"label": "not_supported", "claim": "C3.", "evidence": ["s4"]},
]


def test_wice_partial_policies():
    strict = read_wice(_jsonl(*WICE))
    assert [i.human_label for i in strict] == ["supported", "not_supported", "not_supported"]
    assert [i.item_id for i in strict] == ["w1", "w2", "wice-3"]
    assert {i.group for i in strict} == {"WiCE"} and read_wice(_jsonl(*WICE), group=None)[0].group is None
    assert strict[0].documents == ["s1\ns2"] and strict[0].extra["supporting_sentences"] == [[0]]
    assert strict[1].extra["original_label"] == "partially_supported"
    exclude = read_wice(_jsonl(*WICE), partial="exclude")
    assert [i.item_id for i in exclude] == ["w1", "wice-3"]
    assert exclude.skipped == {"partially_supported": 1}
    separate = read_wice(_jsonl(*WICE), partial="separate")
    assert [i.human_label for i in separate] == ["supported", "partially_supported", "not_supported"]
    with pytest.raises(ValueError):
        read_wice(_jsonl(*WICE), partial="lenient")  # type: ignore[arg-type]


@pytest.mark.parametrize("line, message", [
    ({"claim": "c", "evidence": ["e"]}, "'label'"),
    ({"claim": "c", "evidence": ["e"], "label": "refuted"}, "refuted"),
    ({"claim": "", "evidence": ["e"], "label": "supported"}, "'claim'"),
    ({"claim": "c", "label": "supported"}, "'evidence'"),
    ({"claim": "c", "evidence": ["e", 2], "label": "supported"}, "evidence[1]"),
    ({"claim": "c", "evidence": ["e"], "label": "supported", "meta": "x"}, "'meta'"),
    ({"claim": "c", "evidence": ["e"], "label": "supported", "meta": {"id": "w1"}}, "already used on line 1"),
])
def test_wice_errors_name_file_and_line(tmp_path, line, message):
    path = _write(tmp_path, "wice.jsonl", _jsonl(WICE[0], line))
    with pytest.raises(InputError) as exc:
        read_wice(path)
    assert (exc.value.path, exc.value.line) == (str(path), 2)
    assert message in exc.value.message


# --- nugget banks -> answers_nugget ----------------------------------------------------------------------------------

def _banks() -> dict[str, NuggetBank]:
    return {
        "r1": NuggetBank(request_id="r1", nuggets=(
            Nugget(nugget_id="n1", question="When?", answers=(Answer(text="2021", doc_ids=("d2",)),)),
            Nugget(nugget_id="n2", question="Who?", aggregator="AND", importance="vital", answers=(
                Answer(text="X", doc_ids=("d1",)), Answer(text="Y", doc_ids=("d1", "d3")))),
            Nugget(nugget_id="n3", question="Cost published?", absence=True,
                   answers=(Answer(text="No"),)),
        )),
        "r0": NuggetBank(request_id="r0", nuggets=(
            Nugget(nugget_id="m1", question="What?", answers=(Answer(text="Z", doc_ids=("d9",)),)),
        )),
    }


DOCS = {"d1": Document(doc_id="d1", title="T1", text="one"), "d2": Document(doc_id="d2", text="two"),
        "d9": Document(doc_id="d9", text="nine")}


def test_nugget_banks_positive_and_negative_pairs():
    result = items_from_nugget_banks(_banks(), DOCS.get)
    ids = [i.item_id for i in result]
    # Requests sorted, nuggets in bank order, documents sorted; d3 is missing from the store.
    assert ids == ["r0/m1/d9", "r1/n1/d1", "r1/n1/d2", "r1/n2/d1", "r1/n2/d2"]
    labels = {i.item_id: i.human_label for i in result}
    assert labels == {"r0/m1/d9": "answers", "r1/n1/d1": "does_not_answer", "r1/n1/d2": "answers",
                      "r1/n2/d1": "answers", "r1/n2/d2": "does_not_answer"}
    assert result.skipped == {"absence_nugget": 1, "missing_document": 2}  # (n1, d3) and (n2, d3)
    assert result.missing_doc_ids == ["d3"]
    item = result[3]
    assert item.decision == "answers_nugget" and item.claim == "Who?" and item.group == "r1"
    assert item.documents == ["T1\n\none"] and item.doc_ids == ["d1"]
    assert item.extra["answers"] == ["X", "Y"] and item.extra["attested_answers"] == ["X", "Y"]
    assert item.extra["importance"] == "vital" and item.extra["aggregator"] == "AND"
    assert items_from_nugget_banks(_banks(), DOCS.get) == result  # deterministic


def test_nugget_banks_with_pool_and_raising_lookup():
    def get_doc(doc_id: str) -> Document:
        return DOCS[doc_id]  # KeyError for unknown ids counts as missing

    result = items_from_nugget_banks(_banks(), get_doc, pool={"r1": ["d2", "d1", "d2"]})
    assert [i.item_id for i in result if i.group == "r1"] == ["r1/n1/d1", "r1/n1/d2", "r1/n2/d1", "r1/n2/d2"]
    assert "missing_document" not in result.skipped


def test_nugget_banks_from_example_files():
    read_nugget_banks = pytest.importorskip("judge.formats.nuggets").read_nugget_banks
    docs = {}
    for line in (REPO / "examples" / "docs.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            docs[d["doc_id"]] = Document(**d)
    banks = read_nugget_banks(REPO / "examples" / "nuggets")
    result = items_from_nugget_banks(banks, docs.get)
    assert result.skipped.get("missing_document", 0) == 0
    pos = {i.item_id for i in result if i.human_label == "answers"}
    assert "ex-101/ex-101-q1/ex-d01" in pos and "ex-101/ex-101-q1/ex-d02" not in pos


# --- stratified sampling ---------------------------------------------------------------------------------------------

def _items(counts: dict[str, int]) -> list[CalibrationItem]:
    out = []
    for label, count in counts.items():
        out += [CalibrationItem(item_id=f"{label}{i}", decision="supports_citation", claim="c", human_label=label)
                for i in range(count)]
    return out


def test_stratified_sample_proportions_and_minimum():
    items = _items({"supported": 80, "not_supported": 20})
    sample = stratified_sample(items, 10, seed=1)
    assert collections.Counter(i.human_label for i in sample) == {"supported": 8, "not_supported": 2}
    # 99 : 1 -> proportional would give the rare class 0.1; it gets its minimum of one.
    skewed = stratified_sample(_items({"supported": 99, "partially_supported": 1}), 10, seed=1)
    assert collections.Counter(i.human_label for i in skewed) == {"supported": 9, "partially_supported": 1}
    # 3 classes 50/30/20, n = 7: quotas 3.5, 2.1, 1.4 -> floors 3, 2, 1, the last one to the largest remainder.
    three = stratified_sample(_items({"a": 50, "b": 30, "c": 20}), 7, seed=0)
    assert collections.Counter(i.human_label for i in three) == {"a": 4, "b": 2, "c": 1}
    # Fewer than one per class: the largest classes get one.
    tiny = stratified_sample(_items({"a": 50, "b": 30, "c": 20}), 2, seed=0)
    assert collections.Counter(i.human_label for i in tiny) == {"a": 1, "b": 1}


def test_stratified_sample_is_deterministic_and_keeps_order():
    items = _items({"supported": 80, "not_supported": 20})
    a = stratified_sample(items, 10, seed=5)
    assert a == stratified_sample(items, 10, seed=5)
    assert a != stratified_sample(items, 10, seed=6)
    positions = [items.index(i) for i in a]
    assert positions == sorted(positions) and len({i.item_id for i in a}) == 10
    assert stratified_sample(items, 500, seed=0) == items


# --- the real shared files -------------------------------------------------------------------------------------------

needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared data not found at {SHARED}")


@needs_shared
def test_real_attributionbench_dev():
    items = read_attributionbench(SHARED / "attributionbench" / "dev.jsonl")
    assert len(items) == 1198
    assert collections.Counter(i.human_label for i in items) == {"supported": 599, "not_supported": 599}
    assert collections.Counter(i.group for i in items) == {
        "Stanford-GenSearch": 544, "ExpertQA": 470, "LFQA": 110, "AttributedQA": 74}
    sample = stratified_sample(items, 100, seed=0)
    assert collections.Counter(i.human_label for i in sample) == {"supported": 50, "not_supported": 50}


@needs_shared
def test_real_wice_dev():
    path = SHARED / "wice" / "claim-dev.jsonl"
    separate = read_wice(path, partial="separate")
    assert len(separate) == 349
    assert collections.Counter(i.human_label for i in separate) == {
        "partially_supported": 191, "supported": 115, "not_supported": 43}
    assert len(read_wice(path)) == 349
    excluded = read_wice(path, partial="exclude")
    assert len(excluded) == 158 and excluded.skipped == {"partially_supported": 191}
