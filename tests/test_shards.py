"""Shards partition an evaluation deterministically: every report in exactly one shard, on every machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from judge.errors import InputError
from judge.formats import read_reports
from judge.run.shards import Shard, select, shard_of

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
KEYS = [(f"run-{r}", f"req-{q}") for r in range(20) for q in range(50)]


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_shards_partition_every_report_exactly_once(n):
    shards = [Shard(i, n) for i in range(1, n + 1)]
    seen = Counter((k.run_id, k.request_id) for shard in shards for k in select(_keyed(KEYS), shard))
    assert set(seen) == set(KEYS) and set(seen.values()) == {1}


def test_shards_are_balanced_enough_to_be_worth_splitting():
    sizes = Counter(shard_of(run, request, 4) for run, request in KEYS)
    assert sorted(sizes) == [1, 2, 3, 4]
    # 1,000 reports over 4 shards: a uniform hash puts 250 +- ~14 (one sd) in each
    assert all(200 <= size <= 300 for size in sizes.values()), sizes


def test_bundled_reports_partition_and_keep_input_order():
    reports = read_reports([EXAMPLES / "reports"])
    parts = [list(select(reports, Shard(i, 3))) for i in (1, 2, 3)]
    assert sorted(r.key for part in parts for r in part) == sorted(r.key for r in reports)
    for part in parts:  # each shard keeps the reports in input order
        assert [r.key for r in part] == [r.key for r in reports if r in part]
    assert list(select(reports, None)) == reports


def test_assignment_is_stable_across_processes_and_hash_seeds():
    sample = KEYS[:40]
    mine = [shard_of(run, request, 5) for run, request in sample]
    code = ("import json, sys; from judge.run.shards import shard_of; "
            "print(json.dumps([shard_of(r, q, 5) for r, q in json.loads(sys.argv[1])]))")
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        out = subprocess.run([sys.executable, "-c", code, json.dumps(sample)], env=env, check=True,
                             capture_output=True, text=True).stdout
        assert json.loads(out) == mine


PINNED = [3, 1, 2]


def test_assignment_is_pinned():
    # A change of hash would silently re-shard every evaluation in flight: these values must never move.
    assert [shard_of("run-cited", "ex-101", 3), shard_of("run-cited", "ex-102", 3),
            shard_of("run-padded", "ex-101", 3)] == PINNED
    assert shard_of("ab", "c", 1000) != shard_of("a", "bc", 1000)



@pytest.mark.parametrize("spec, index, count", [("1/1", 1, 1), ("2/3", 2, 3), (" 3 / 3 ", 3, 3)])
def test_parse(spec, index, count):
    shard = Shard.parse(spec)
    assert (shard.index, shard.count) == (index, count) and str(Shard.parse(str(shard))) == str(shard)


@pytest.mark.parametrize("spec, message", [
    ("2", "not of the form I/N"), ("a/b", "not of the form I/N"), ("-1/3", "not of the form I/N"),
    ("0/3", "numbered 1 to 3"), ("4/3", "numbered 1 to 3"), ("1/0", "at least 1"),
])
def test_parse_errors_say_what_to_write(spec, message):
    with pytest.raises(InputError, match=message):
        Shard.parse(spec)


class _Key:
    def __init__(self, run_id: str, request_id: str):
        self.run_id, self.request_id = run_id, request_id


def _keyed(keys):
    return [_Key(*key) for key in keys]
