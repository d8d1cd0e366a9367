"""Matching one bank's nuggets to another's (a created bank against a person's, for benchmarks/nugget_creation.py):
one match_nugget decision per nugget of `bank`, listing every question of `other`."""

from __future__ import annotations

import asyncio

from judge.nuggets.asking import Asker, Calls
from judge.nuggets.decisions import match_nugget
from judge.types import NuggetBank, Request


async def match_banks(request: Request, bank: NuggetBank, other: NuggetBank, asker: Asker,
                      calls: Calls | None = None) -> dict[str, str | None]:
    """Each nugget id of `bank` -> the id of the `other` nugget the judge says asks the same (None: none, or the
    decision failed)."""
    calls = calls or Calls()
    others = [n for n in other.nuggets if not n.absence]
    if not others:
        return {n.nugget_id: None for n in bank.nuggets}
    responses = await asyncio.gather(*(asker.creation(match_nugget.prepare(request, nugget, others), calls)
                                       for nugget in bank.nuggets))
    found: dict[str, str | None] = {}
    for nugget, (response, _) in zip(bank.nuggets, responses, strict=True):
        label = getattr(response, "label", "none") if response is not None else "none"
        found[nugget.nugget_id] = others[int(label[1:]) - 1].nugget_id if label != "none" else None
    return found
