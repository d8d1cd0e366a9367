"""Shared by the Ray tests: the loopback-only environment Ray must start in, a synthetic collection built from the
bundled example, the one-process run to compare with, and the check that Ray's connections stay on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
BYTE_IDENTICAL = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")
# Without the first, Ray connects its own processes over the machine's external address (issue 38).
RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}


def loopback_ray_env() -> None:
    os.environ.update(RAY_ENV)


def copies_of_the_example(root: Path, copies: int) -> Path:
    """The example's reports `copies` times over, each copy under other run ids: distinct reports that ask the
    example's questions (so a run of them has work to share out, and answers to share)."""
    reports = root / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    for k in range(copies):
        for file in sorted((EXAMPLES / "reports").glob("*.jsonl")):
            lines = []
            for line in file.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                record["metadata"]["run_id"] = f"{record['metadata']['run_id']}-copy{k}"
                lines.append(json.dumps(record))
            (reports / f"{file.stem}-copy{k}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return reports


def eval_args(reports: Path, api_base: str, cache: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", str(reports), "--requests", str(EXAMPLES / "requests.jsonl"), "--docs",
            str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
            "--api-base", api_base, "--api-key", "x", "--cache-dir", str(cache), "--out", str(out), *extra]


def same_outputs(a: Path, b: Path) -> list[str]:
    """The byte-identical outputs that differ between two output folders (empty: none)."""
    return [name for name in BYTE_IDENTICAL if (a / name).read_bytes() != (b / name).read_bytes()]


_ADDRESS = re.compile(r"^(\S+):\d+$")


def ray_connections_off_loopback() -> tuple[int, list[str]]:
    """(Ray's established TCP connections, those with an end off 127.0.0.1), from `ss -tnp`: a connection is Ray's
    when its process is the GCS, a raylet or a Ray worker."""
    lines = subprocess.run(["ss", "-tnpH", "state", "established"], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    ray_lines = [line for line in lines if re.search(r'"(gcs_server|raylet|ray::[^"]*)"', line)]
    off = []
    for line in ray_lines:
        fields = line.split()
        ends = [_ADDRESS.match(field) for field in fields[2:4]]
        if not all(end and end.group(1) in ("127.0.0.1", "[::ffff:127.0.0.1]") for end in ends):
            off.append(line)
    return len(ray_lines), off
