"""Nugget banks in the v1/v2 `items` layout: one item per answer, merged by question; the reader is
judge.formats.nuggets."""

from __future__ import annotations

from typing import Any

from judge.formats.nugget_fields import Where
from judge.formats.nuggets import items_banks_of
from judge.formats.registry import Format, register
from judge.types import NuggetBank


def _detect(record: dict[str, Any]) -> bool:
    return "items" in record


def _parse(record: dict[str, Any], name: str, line: int | None) -> list[NuggetBank]:
    return items_banks_of(record, Where(name, line))


FORMAT = register(Format(
    "items-nuggets", "nuggets", "v1/v2 'items' banks: {query_id?, items: [{query_id?, question_id?, question_text, "
    "info?, gold_answers or answer, citations?}]}, one item per answer", _detect, _parse, use="give it to --nuggets",
    rank=30))
