"""Report requests (JSONL, one per line; `.jsonl.gz` too). One reader for the shapes the TREC tracks use:

    NeuCLIR / RAGTIME:  {"request_id", "title"?, "background", "problem_statement", "limit"?, "collection_ids"?}
    TREC RAG 2025:      {"request_id" | "topic_id" | "narrative_id", "title"?, "narrative"}
    AutoJudge, RAG 24:  {"request_id", "title"}            (the title is the whole information need)
    any of them:        "word_limit": N instead of "limit" (the report is limited to N words, not characters)

`background` is optional (empty when absent). `narrative` is accepted as the problem statement. A request with
neither a problem statement nor a narrative uses its title as the problem statement (and then has no separate
title, so prompts do not show the same text twice); a request with none of the three is an input error.
Unknown keys are ignored, so files from newer tracks with extra fields still load.
"""

from __future__ import annotations

from typing import Any

from judge.errors import InputError
from judge.formats import registry
from judge.formats._jsonl import Sources, expand_paths, get_id, iter_jsonl, source_name, type_name
from judge.formats._jsonl import read_one as _read_one
from judge.labels import LimitUnit
from judge.types import Request

# Where the tracks keep the request id, in order of preference.
_ID_KEYS = ("request_id", "topic_id", "narrative_id")


def read_requests(sources: Sources) -> dict[str, Request]:
    """Requests keyed by request_id, in input order. A request id seen twice, or a file without any request,
    is an InputError."""
    requests: dict[str, Request] = {}
    first_seen: dict[str, str] = {}
    for source in expand_paths(sources):
        name = source_name(source)
        found = 0
        for line, record in iter_jsonl(source):
            found += 1
            request = _read_one(registry.parse("requests", record, name, line), Request, name, line)
            if request.request_id in requests:
                raise InputError(f"duplicate request_id {request.request_id!r} (first at "
                                 f"{first_seen[request.request_id]}); keep one definition", name, line)
            requests[request.request_id] = request
            first_seen[request.request_id] = f"{name}:{line}"
        if not found:
            raise InputError("no requests in this file (it is empty); give one JSON request per line", name)
    return requests


def one_request(record: dict[str, Any], name: str, line: int | None) -> list[Request]:
    """A request line as the registry's parsers return it: the one request it holds (every request format's parser)."""
    return [_parse_request(record, name, line)]


def _parse_request(record: dict[str, Any], name: str, line: int | None) -> Request:
    request_id = _request_id(record, name, line)
    title = _optional_str(record, "title", name, line)
    problem = _optional_str(record, "problem_statement", name, line)
    if problem is None:
        problem = _optional_str(record, "narrative", name, line)
    if problem is None or not problem.strip():
        if title is None or not title.strip():
            raise InputError("request has no 'problem_statement', 'narrative' or 'title'; give at least a title "
                             "that states the information need", name, line)
        problem, title = title, None
    limit, unit = _limit(record, name, line)
    return Request(
        request_id=request_id,
        title=title,
        background=_optional_str(record, "background", name, line) or "",
        problem_statement=problem,
        limit=limit,
        limit_unit=unit,
        collection_ids=_collection_ids(record, name, line),
    )


def _request_id(record: dict[str, Any], name: str, line: int) -> str:
    found = {key: get_id(record, key, key, name, line) for key in _ID_KEYS}
    given = {key: value for key, value in found.items() if value is not None}
    if not given:
        raise InputError("missing field 'request_id' (or 'topic_id' / 'narrative_id')", name, line)
    if len(set(given.values())) > 1:
        listed = ", ".join(f"{k}={v!r}" for k, v in given.items())
        raise InputError(f"conflicting request ids ({listed}); keep one", name, line)
    return next(iter(given.values()))


def _optional_str(record: dict[str, Any], key: str, name: str, line: int) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise InputError(f"field '{key}' must be a string or null, found {type_name(value)}", name, line)
    return value


def _limit(record: dict[str, Any], name: str, line: int) -> tuple[int | None, LimitUnit]:
    chars, words = _positive_int(record, "limit", name, line), _positive_int(record, "word_limit", name, line)
    if chars is not None and words is not None:
        raise InputError("request has both 'limit' (characters) and 'word_limit' (words); keep the one that "
                         "applies", name, line)
    if words is not None:
        return words, "words"
    return chars, "characters"


def _positive_int(record: dict[str, Any], key: str, name: str, line: int) -> int | None:
    value = record.get(key)
    if value is None:
        return None
    # bool is an int in Python; `"limit": true` is a mistake, not a limit of 1.
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        unit = "words" if key == "word_limit" else "characters"
        raise InputError(f"field '{key}' must be a positive integer ({unit}), found {value!r}", name, line)
    return value


def _collection_ids(record: dict[str, Any], name: str, line: int) -> tuple[str, ...]:
    value = record.get("collection_ids")
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError(f"field 'collection_ids' must be a list of strings, found {type_name(value)}",
                         name, line)
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise InputError(f"collection_ids[{i}] must be a string, found {type_name(item)}", name, line)
    return tuple(value)
