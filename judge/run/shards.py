"""Deterministic shards of an evaluation: `eval --shard I/N` judges the reports whose (run, request) hash to I.

Shards are numbered 1..N. The hash is SHA-256 of the run id and request id (never Python's `hash()`, which is
salted per process), so every machine and every rerun puts a report in the same shard, and the N shards of one
evaluation partition its reports: each report is judged by exactly one shard. Which shard a report falls in
depends on nothing but its two ids, so adding reports to an evaluation never moves the existing ones.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar

from judge.errors import InputError

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def shard_of(run_id: str, request_id: str, n: int) -> int:
    """The shard (1..n) of the report of `run_id` for `request_id`."""
    if n < 1:
        raise ValueError(f"the number of shards must be at least 1, not {n}")
    # A separator that cannot occur in either id keeps ("ab", "c") and ("a", "bc") apart.
    digest = hashlib.sha256(f"{run_id}\x00{request_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % n + 1


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1-based, as written on the command line: 1/3, 2/3, 3/3)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise InputError(f"shard {self}: the number of shards must be at least 1")
        if not 1 <= self.index <= self.count:
            raise InputError(f"shard {self}: shards are numbered 1 to {self.count}; "
                             f"write one of 1/{self.count} ... {self.count}/{self.count}")

    @classmethod
    def parse(cls, spec: str) -> Shard:
        """`I/N`, e.g. `2/3`: the second of three shards."""
        match = _SPEC.fullmatch(spec)
        if not match:
            raise InputError(f"shard {spec!r} is not of the form I/N (e.g. 2/3 for the second of three shards)")
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def contains(self, run_id: str, request_id: str) -> bool:
        return shard_of(run_id, request_id, self.count) == self.index


class _Keyed(Protocol):
    @property
    def run_id(self) -> str: ...

    @property
    def request_id(self) -> str: ...


Item = TypeVar("Item", bound=_Keyed)


def select(reports: Iterable[Item], shard: Shard | None) -> Iterator[Item]:
    """The reports (or judgments: anything with run_id and request_id) of one shard, lazily, in input order.
    `shard=None` selects everything, so callers need no special case for an unsharded run."""
    for report in reports:
        if shard is None or shard.contains(report.run_id, report.request_id):
            yield report
