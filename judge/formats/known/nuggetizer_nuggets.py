"""Nugget banks as castorini nuggetizer writes them: nugget texts with their importance, no answers or documents;
the reader is judge.formats.nuggets, the writer judge.formats.nugget_writer (which needs the query's text)."""

from __future__ import annotations

from typing import Any

from judge.formats.nugget_fields import Where
from judge.formats.nuggets import nuggetizer_bank_of
from judge.formats.registry import Format, register
from judge.types import NuggetBank


def _detect(record: dict[str, Any]) -> bool:
    return "nuggets" in record


def _parse(record: dict[str, Any], name: str, line: int | None) -> list[NuggetBank]:
    return [nuggetizer_bank_of(record, Where(name, line))]


FORMAT = register(Format(
    "nuggetizer-nuggets", "nuggets", "castorini nuggetizer records: {qid, query, nuggets: [{text, importance: vital "
    "or okay}]}", _detect, _parse, use="give it to --nuggets", rank=40))
