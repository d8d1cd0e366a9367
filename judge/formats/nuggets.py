"""Nugget banks in the v3 format: one JSON object per file (`nuggets_<request_id>.v3.json`).

    {"query_id": "300",
     "nugget_bank": {<question text>: {
         "question", "question_id", "aggregator_type": "OR" | "AND",
         "importance"?: "vital" | "okay", "absence"?: bool,
         "answers": {<answer text>: {"answer", "references": [{"doc_id"}, ...]}}}}}

The request id comes from `query_id`, not from the file name. Unknown keys (creator, title_query, ...) are
ignored. `aggregator_type` is matched case-insensitively. A reference may also be a bare doc id string. The
dictionary keys double as fallbacks when `question` / `answer` are absent. A whole-file JSON object has no
meaningful line per nugget, so errors name the file and the nugget question instead.
"""

from __future__ import annotations

from typing import Any, get_args

from judge.errors import InputError
from judge.formats._jsonl import Sources, expand_paths, get_id, read_json_document, source_name, type_name
from judge.labels import Aggregator, Importance
from judge.types import Answer, Nugget, NuggetBank

_AGGREGATORS: tuple[str, ...] = get_args(Aggregator)
_IMPORTANCES: tuple[str, ...] = get_args(Importance)


def read_nugget_banks(sources: Sources) -> dict[str, NuggetBank]:
    """Nugget banks keyed by request id, from files, directories of *.json, or literal JSON text."""
    banks: dict[str, NuggetBank] = {}
    origin: dict[str, str] = {}
    for source in expand_paths(sources, patterns=("*.json", "*.json.gz")):
        name = source_name(source)
        bank = _parse_bank(read_json_document(source), name)
        if bank.request_id in banks:
            raise InputError(f"second nugget bank for request {bank.request_id!r} (first in "
                             f"{origin[bank.request_id]}); keep one file per request", name)
        banks[bank.request_id] = bank
        origin[bank.request_id] = name
    return banks


def _parse_bank(doc: Any, name: str) -> NuggetBank:
    if not isinstance(doc, dict):
        raise InputError(f"a nugget bank file must hold one JSON object, found {type_name(doc)}", name)
    request_id = get_id(doc, "query_id", "query_id", name, None)
    if request_id is None:
        raise InputError("missing field 'query_id' (the request id this bank belongs to)", name)
    if "nugget_bank" not in doc:
        raise InputError("missing field 'nugget_bank' (an object: question text -> nugget)", name)
    raw_bank = doc["nugget_bank"]
    if not isinstance(raw_bank, dict):
        raise InputError(f"field 'nugget_bank' must be an object, found {type_name(raw_bank)}", name)

    nuggets: list[Nugget] = []
    seen_ids: set[str] = set()
    for key, raw in raw_bank.items():
        nugget = _parse_nugget(key, raw, name)
        if nugget.nugget_id in seen_ids:
            raise InputError(f"{_where(key)}: question_id {nugget.nugget_id!r} is used by another nugget "
                             "in this bank; question ids must be unique", name)
        seen_ids.add(nugget.nugget_id)
        nuggets.append(nugget)
    return NuggetBank(request_id=request_id, nuggets=tuple(nuggets))


def _where(question: str) -> str:
    short = question if len(question) <= 80 else question[:77] + "..."
    return f"nugget {short!r}"


def _parse_nugget(key: str, raw: Any, name: str) -> Nugget:
    where = _where(key)
    if not isinstance(raw, dict):
        raise InputError(f"{where} must be an object, found {type_name(raw)}", name)

    question = raw.get("question", key)
    if not isinstance(question, str) or not question.strip():
        raise InputError(f"{where}: 'question' must be a non-empty string", name)
    where = _where(question)

    nugget_id = get_id(raw, "question_id", f"{where}: question_id", name, None)
    if nugget_id is None:
        raise InputError(f"{where}: missing field 'question_id'; give every nugget a unique id", name)

    if "aggregator_type" not in raw:
        raise InputError(f"{where}: missing field 'aggregator_type'; use one of {', '.join(_AGGREGATORS)}",
                         name)
    aggregator = raw["aggregator_type"]
    if not isinstance(aggregator, str) or aggregator.upper() not in _AGGREGATORS:
        raise InputError(f"{where}: aggregator_type is {aggregator!r}; use one of {', '.join(_AGGREGATORS)}",
                         name)

    importance = raw.get("importance")
    if importance is None:
        importance = "okay"
    if importance not in _IMPORTANCES:
        raise InputError(f"{where}: importance is {importance!r}; use one of {', '.join(_IMPORTANCES)}", name)

    absence = raw.get("absence")
    if absence is None:
        absence = False
    if not isinstance(absence, bool):
        raise InputError(f"{where}: absence must be true or false, found {type_name(absence)}", name)

    if "answers" not in raw:
        raise InputError(f"{where}: missing field 'answers' (an object: answer text -> answer)", name)
    raw_answers = raw["answers"]
    if not isinstance(raw_answers, dict):
        raise InputError(f"{where}: 'answers' must be an object, found {type_name(raw_answers)}", name)
    answers = tuple(_parse_answer(k, v, where, name) for k, v in raw_answers.items())

    return Nugget(nugget_id=nugget_id, question=question, aggregator=aggregator.upper(),
                  importance=importance, absence=absence, answers=answers)


def _parse_answer(key: str, raw: Any, where: str, name: str) -> Answer:
    label = f"{where}, answer {key[:60]!r}"
    if not isinstance(raw, dict):
        raise InputError(f"{label} must be an object with 'answer' and 'references', found {type_name(raw)}",
                         name)
    text = raw.get("answer", key)
    if not isinstance(text, str):
        raise InputError(f"{label}: 'answer' must be a string, found {type_name(text)}", name)
    refs = raw.get("references")
    if refs is None:
        refs = []  # no attesting documents is legal
    if not isinstance(refs, list):
        raise InputError(f"{label}: 'references' must be a list, found {type_name(refs)}", name)

    doc_ids: dict[str, None] = {}  # ordered set
    for i, ref in enumerate(refs):
        doc_id = ref.get("doc_id") if isinstance(ref, dict) else ref
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise InputError(f"{label}: references[{i}] must be {{\"doc_id\": \"...\"}} with a non-empty "
                             "document id", name)
        doc_ids.setdefault(doc_id, None)
    return Answer(text=text, doc_ids=tuple(doc_ids))
