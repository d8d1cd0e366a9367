"""Report requests (JSONL, one per line):
    {"request_id", "title"?, "background", "problem_statement", "limit"?, "collection_ids"?}
Unknown keys are ignored, so files from newer tracks with extra fields still load.
"""

from __future__ import annotations

from typing import Any

from judge.errors import InputError
from judge.formats._jsonl import Sources, expand_paths, get_id, iter_jsonl, source_name, type_name
from judge.types import Request


def read_requests(sources: Sources) -> dict[str, Request]:
    """Requests keyed by request_id, in input order. A request id seen twice is an InputError."""
    requests: dict[str, Request] = {}
    first_seen: dict[str, str] = {}
    for source in expand_paths(sources):
        name = source_name(source)
        for line, record in iter_jsonl(source):
            request = _parse_request(record, name, line)
            if request.request_id in requests:
                raise InputError(f"duplicate request_id {request.request_id!r} (first at "
                                 f"{first_seen[request.request_id]}); keep one definition", name, line)
            requests[request.request_id] = request
            first_seen[request.request_id] = f"{name}:{line}"
    return requests


def _parse_request(record: dict[str, Any], name: str, line: int) -> Request:
    request_id = get_id(record, "request_id", "request_id", name, line)
    if request_id is None:
        raise InputError("missing field 'request_id'", name, line)
    return Request(
        request_id=request_id,
        title=_optional_str(record, "title", name, line),
        background=_required_str(record, "background", name, line),
        problem_statement=_required_str(record, "problem_statement", name, line),
        limit=_limit(record, name, line),
        collection_ids=_collection_ids(record, name, line),
    )


def _required_str(record: dict[str, Any], key: str, name: str, line: int) -> str:
    if key not in record:
        raise InputError(f"missing field '{key}' (a string)", name, line)
    value = record[key]
    if not isinstance(value, str):
        raise InputError(f"field '{key}' must be a string, found {type_name(value)}", name, line)
    return value


def _optional_str(record: dict[str, Any], key: str, name: str, line: int) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise InputError(f"field '{key}' must be a string or null, found {type_name(value)}", name, line)
    return value


def _limit(record: dict[str, Any], name: str, line: int) -> int | None:
    value = record.get("limit")
    if value is None:
        return None
    # bool is an int in Python; `"limit": true` is a mistake, not a limit of 1.
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(f"field 'limit' must be a positive integer (characters), found {value!r}",
                         name, line)
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
