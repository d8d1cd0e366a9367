"""Nugget banks in the TREC AutoJudge `NuggetBanks` container: {"banks": {request_id: bank}}, each bank in any
layout the other nugget formats read; the reader is judge.formats.nuggets."""

from __future__ import annotations

from typing import Any

from judge.formats.nugget_fields import Where
from judge.formats.nuggets import banks_in
from judge.formats.registry import Format, register
from judge.types import NuggetBank


def _detect(record: dict[str, Any]) -> bool:
    return isinstance(record.get("banks"), dict)


def _parse(record: dict[str, Any], name: str, line: int | None) -> list[NuggetBank]:
    return [bank for value in record["banks"].values() for bank in banks_in(value, Where(name, line))]


FORMAT = register(Format(
    "autojudge-banks", "nuggets", "TREC AutoJudge bank containers: {\"banks\": {request_id: bank}}",
    _detect, _parse, use="give it to --nuggets", rank=10))
