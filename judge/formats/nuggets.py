"""Nugget banks in every layout the ecosystem uses, into one NuggetBank per request.

Files: `*.json` / `*.json.gz` hold one bank (or a list of banks, or an AutoJudge `{"banks": {id: bank}}`
container); `*.jsonl` / `*.jsonl.gz` hold one bank per line (a multi-bank `nuggets.jsonl`). A directory means
all such files in it. A `.json` file that turns out to hold one bank per line is read as JSONL.

Bank layouts, recognised by their keys:
    v3 (Auto-ARGUE, AutoJudge `NuggetBank`): {"query_id" | "metadata": {"topic_id"},
        "nugget_bank": {question: nugget} | [nugget, ...], "claim_bank"?: {claim: claim} | [claim, ...]}
        nugget: {"question", "question_id"?, "aggregator_type"?, "importance"?, "absence"?,
                 "answers": {text: {"answer", "references": [{"doc_id"} | doc_id]}} | [answer, ...]}
        (the list form is the RAGTIME 2026 submission format)
    v1/v2 items: {"query_id"?, "items": [{"query_id"?, "question_id"?, "question_text", "info"?: {...},
        "gold_answers": [...] | "answer", "citations"?}, ...]}  one item per answer, merged by question
    castorini nuggetizer: {"qid", "query", "nuggets": [{"text", "importance": "vital" | "okay"}, ...]}

The request id comes from the bank, never from the file name. Unknown keys (creator, title_query, ...) are
ignored. Errors name the file, the line for JSONL, and the nugget (a whole-file JSON object has no useful line
per nugget).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from judge.errors import InputError
from judge.formats import nugget_fields as fields
from judge.formats import registry
from judge.formats._jsonl import (
    Source,
    Sources,
    expand_paths,
    get_id,
    is_literal,
    iter_jsonl,
    read_json_document,
    source_name,
    type_name,
)
from judge.formats.nugget_fields import Where
from judge.types import Nugget, NuggetBank

NUGGET_PATTERNS = ("*.json", "*.json.gz", "*.jsonl", "*.jsonl.gz")
LAYOUTS = "'nugget_bank' or 'claim_bank' (v3), 'items' (v1/v2) or 'nuggets' (nuggetizer)"


def read_nugget_banks(sources: Sources) -> dict[str, NuggetBank]:
    """Nugget banks keyed by request id, from files, directories, or literal JSON / JSONL text."""
    banks: dict[str, NuggetBank] = {}
    origin: dict[str, str] = {}
    for source in expand_paths(sources, patterns=NUGGET_PATTERNS):
        name = source_name(source)
        found = 0
        for where, doc in _documents(source, name):
            for bank in banks_in(doc, where):
                found += 1
                here = f"{where.name}:{where.line}" if where.line is not None else where.name
                if bank.request_id in banks:
                    raise where.error(f"second nugget bank for request {bank.request_id!r} (first in "
                                      f"{origin[bank.request_id]}); keep one bank per request")
                banks[bank.request_id] = bank
                origin[bank.request_id] = here
        if not found:
            raise InputError("no nugget bank in this file (it is empty); a nugget bank file holds one JSON "
                             "object per bank", name)
    return banks


def _documents(source: Source, name: str) -> Iterator[tuple[Where, Any]]:
    if not is_literal(source) and name.endswith((".jsonl", ".jsonl.gz")):
        for line, obj in iter_jsonl(source):
            yield Where(name, line), obj
        return
    try:
        doc = read_json_document(source)
    except InputError as exc:
        if "Extra data" not in exc.message:  # JSON followed by more JSON: one bank per line
            raise
        for line, obj in iter_jsonl(source):
            yield Where(name, line), obj
        return
    yield Where(name), doc


def banks_in(doc: Any, where: Where) -> list[NuggetBank]:
    """The banks of one JSON value: a bank, or a list of them, each read by the nugget format that detects it
    (judge.formats.registry)."""
    if isinstance(doc, list):
        return [bank for item in doc for bank in banks_in(item, where)]
    if not isinstance(doc, dict):
        raise where.error(f"a nugget bank must be one JSON object, found {type_name(doc)}")
    return registry.parse("nuggets", doc, where.name, where.line)


def v3_bank_of(doc: dict[str, Any], where: Where) -> NuggetBank:
    request_id = get_id(doc, "query_id", "query_id", where.name, where.line)
    metadata = doc.get("metadata")
    if request_id is None and isinstance(metadata, dict):  # RAGTIME 2026 keeps it in the run metadata
        request_id = (get_id(metadata, "topic_id", "metadata.topic_id", where.name, where.line)
                      or get_id(metadata, "query_id", "metadata.query_id", where.name, where.line))
    if request_id is None:
        raise where.error("missing field 'query_id' (or 'metadata.topic_id'): the request this bank belongs to")
    nuggets = _entries(doc, "nugget_bank", fields.question_nugget, where)
    nuggets += _entries(doc, "claim_bank", fields.claim_nugget, where)
    return NuggetBank(request_id=request_id, nuggets=fields.merge(nuggets, where))


def _entries(doc: dict[str, Any], key: str, parse: Any, where: Where) -> list[Nugget]:
    raw = doc.get(key)
    if raw is None:
        return []
    if isinstance(raw, dict):
        return [parse(k, v, where) for k, v in raw.items()]
    if isinstance(raw, list):
        return [parse(None, v, where) for v in raw]
    raise where.error(f"field '{key}' must be an object (text -> nugget) or a list, found {type_name(raw)}")


def items_banks_of(doc: dict[str, Any], where: Where) -> list[NuggetBank]:
    items = doc["items"]
    if not isinstance(items, list):
        raise where.error(f"field 'items' must be a list, found {type_name(items)}")
    default_id = get_id(doc, "query_id", "query_id", where.name, where.line)
    by_request: dict[str, list[Nugget]] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise where.error(f"items[{i}] must be an object, found {type_name(item)}")
        request_id = get_id(item, "query_id", f"items[{i}].query_id", where.name, where.line) or default_id
        if request_id is None:
            raise where.error(f"items[{i}]: missing field 'query_id' (on the item or the file)")
        by_request.setdefault(request_id, []).append(fields.item_nugget(item, i, where))
    return [NuggetBank(request_id=rid, nuggets=fields.merge(nuggets, where)) for rid, nuggets in by_request.items()]


def nuggetizer_bank_of(doc: dict[str, Any], where: Where) -> NuggetBank:
    request_id = (get_id(doc, "qid", "qid", where.name, where.line)
                  or get_id(doc, "query_id", "query_id", where.name, where.line))
    if request_id is None:
        raise where.error("missing field 'qid' (the request this nuggetizer bank belongs to)")
    raw = doc["nuggets"]
    if not isinstance(raw, list):
        raise where.error(f"field 'nuggets' must be a list of {{\"text\", \"importance\"}}, found {type_name(raw)}")
    return NuggetBank(request_id=request_id,
                      nuggets=fields.merge([fields.text_nugget(n, i, where) for i, n in enumerate(raw)], where))
