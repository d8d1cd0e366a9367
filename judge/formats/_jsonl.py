"""Shared plumbing for every reader: where input comes from, and JSONL lines as (line_number, dict).

A *source* is a path (str or Path) or a literal string. A str counts as literal text when it contains a
newline or starts with `{`, so tests and small scripts can pass data inline; a Path is always a path.
Literal text is reported as `<string>` in errors.

Files ending in `.gz` are read through gzip, because document collections are usually shipped compressed.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from judge.errors import InputError

Source = str | Path
Sources = Source | Iterable[Source]

# One JSONL line (and one whole JSON file) may be at most this many bytes. Real reports, requests and
# documents are far below it; anything bigger is almost surely the wrong file (or a whole corpus on one line),
# and refusing it early beats exhausting memory. Tests may patch it.
MAX_LINE_BYTES = 50 * 1024 * 1024

LITERAL_NAME = "<string>"
JSONL_PATTERNS = ("*.jsonl", "*.jsonl.gz")

_BOM = b"\xef\xbb\xbf"


def is_literal(source: Source) -> bool:
    return isinstance(source, str) and ("\n" in source or source.lstrip().startswith("{"))


def source_name(source: Source) -> str:
    return LITERAL_NAME if is_literal(source) else str(source)


def _as_list(sources: Sources) -> list[Source]:
    # A lone str/Path is one source, not an iterable of characters.
    if isinstance(sources, (str, Path)):
        return [sources]
    return list(sources)


def expand_paths(sources: Sources, patterns: tuple[str, ...] = JSONL_PATTERNS) -> list[Source]:
    """Files stay as given, a directory becomes its matching files (sorted, not recursive), literals pass.

    A missing path, or a directory with no matching file, is an InputError: silently reading nothing would
    produce an empty evaluation that looks like a success.
    """
    out: list[Source] = []
    for source in _as_list(sources):
        if is_literal(source):
            out.append(source)
            continue
        path = Path(source)
        if path.is_dir():
            found = sorted({p for pattern in patterns for p in path.glob(pattern) if p.is_file()})
            if not found:
                wanted = " or ".join(patterns)
                raise InputError(
                    f"directory has no {wanted} files; point at the files or at the right directory", path)
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            raise InputError("no such file or directory; check the path", path)
    return out


def open_binary(source: Source) -> IO[bytes]:
    if is_literal(source):
        return io.BytesIO(str(source).encode("utf-8"))
    path = Path(source)
    try:
        return gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", path) from exc


def _decode(raw: bytes, name: str, line: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 at byte {exc.start + 1} of the line; save the file as UTF-8",
                         name, line) from exc


def parse_json(text: str, name: str, line: int | None, line_offset: int = 0) -> Any:
    """json.loads with an InputError that points at the column (and the line, for multi-line documents)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno + line_offset
        raise InputError(f"malformed JSON at column {exc.colno}: {exc.msg}; fix the JSON syntax", name,
                         where) from exc


def iter_jsonl(source: Source, max_line_bytes: int | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (1-based line number, object) for each non-blank line. Blank lines are skipped, not errors."""
    cap = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    name = source_name(source)
    with open_binary(source) as fh:
        line_no = 0
        while True:
            try:
                # Read at most cap+1 bytes so a monstrous line is detected without loading it whole.
                raw = fh.readline(cap + 1)
            except (OSError, EOFError) as exc:  # e.g. a truncated or corrupt .gz
                raise InputError(f"cannot read past this line: {exc}", name, line_no + 1) from exc
            if not raw:
                return
            line_no += 1
            if len(raw) > cap and not raw.endswith(b"\n"):
                raise InputError(f"line is longer than {cap:,} bytes; each line must hold one JSON object "
                                 "(is this the right file?)", name, line_no)
            if line_no == 1:
                raw = raw.removeprefix(_BOM)
            text = _decode(raw, name, line_no).strip()
            if not text:
                continue
            obj = parse_json(text, name, line_no)
            if not isinstance(obj, dict):
                raise InputError(f"expected a JSON object on each line, found {type_name(obj)}",
                                 name, line_no)
            yield line_no, obj


def read_json_document(source: Source, max_bytes: int | None = None) -> Any:
    """Read one whole JSON document (e.g. a nugget bank), refusing anything over the size cap."""
    cap = MAX_LINE_BYTES if max_bytes is None else max_bytes
    name = source_name(source)
    with open_binary(source) as fh:
        try:
            raw = fh.read(cap + 1)
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read: {exc}", name) from exc
    if len(raw) > cap:
        raise InputError(f"file is larger than {cap:,} bytes; is this the right file?", name)
    raw = raw.removeprefix(_BOM)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 at byte {exc.start + 1}; save the file as UTF-8", name) from exc
    return parse_json(text, name, None)


def type_name(value: Any) -> str:
    """JSON's name for a value's type, for messages a user (not a Python programmer) reads."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def get_id(obj: dict[str, Any], key: str, label: str, name: str, line: int | None) -> str | None:
    """An identifier field: a non-empty string, or an integer (TREC topic ids are often numbers in JSON).

    Returns None when the key is absent so callers can try aliases; any other type is an InputError.
    """
    if key not in obj:
        return None
    value = obj[key]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InputError(f"{label} must be a string, found {type_name(value)}", name, line)
    if not value.strip():
        raise InputError(f"{label} is empty; give it a value", name, line)
    return value
