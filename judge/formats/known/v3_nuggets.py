"""Nugget banks in the v3 layout (Auto-ARGUE, AutoJudge `NuggetBank`, RAGTIME 2026): questions with their answers
and the documents that attest them, and claims; the reader is judge.formats.nuggets, the writer
judge.formats.nugget_writer."""

from __future__ import annotations

from typing import Any

from judge.formats.nugget_fields import Where
from judge.formats.nugget_writer import v3_bank
from judge.formats.nuggets import LAYOUTS, v3_bank_of
from judge.formats.registry import Format, refuse_with, register
from judge.types import NuggetBank


def _detect(record: dict[str, Any]) -> bool:
    return "nugget_bank" in record or "claim_bank" in record


def _parse(record: dict[str, Any], name: str, line: int | None) -> list[NuggetBank]:
    return [v3_bank_of(record, Where(name, line))]


def _refuse(record: dict[str, Any], name: str, line: int | None) -> list[NuggetBank]:
    where = Where(name, line)
    if "query_id" not in record:
        raise where.error(f"missing field 'query_id' and no nuggets; a nugget bank has {LAYOUTS}")
    raise where.error(f"missing field 'nugget_bank': a nugget bank has {LAYOUTS}")


FORMAT = register(Format(
    "v3-nuggets", "nuggets", "v3 banks (Auto-ARGUE, AutoJudge, RAGTIME): {query_id or metadata.topic_id, "
    "nugget_bank: {question: nugget} or [nugget], claim_bank?}, a nugget {question, question_id?, aggregator_type?, "
    "importance?, absence?, answers: {text: {answer, references}} or [answer]}",
    _detect, _parse, lambda bank: v3_bank(bank, {}), use="give it to --nuggets", rank=20))
refuse_with("nuggets", _refuse)
