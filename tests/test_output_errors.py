"""Outputs that cannot be written are one line naming the file or the option.

Before: `--out` under a regular file ended in NotADirectoryError tracebacks (eval, view, merge, import auto-argue),
and a full disk while eval streamed its judgments in `OSError: [Errno 28]`.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli.app import app

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _run(args: list[str]) -> tuple[int, list[str], str]:
    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    return result.exit_code, [line for line in result.stderr.splitlines() if line.strip()], output


def _eval_args(endpoint, tmp_path: Path, out: Path) -> list[str]:
    return ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"), "--docs",
            str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
            "--api-base", endpoint.api_base, "--api-key", "x", "--cache", str(tmp_path / "cache"), "--out", str(out)]


@pytest.mark.parametrize("command", ["eval", "view", "merge", "import auto-argue", "score", "calibrate",
                                     "export auto-argue", "baseline rouge"])
def test_out_under_a_regular_file_is_a_usage_error_naming_it(command, tmp_path, endpoint):
    afile = tmp_path / "results.tsv"
    afile.write_text("x")
    out = afile / "run1"
    inputs = {"eval": _eval_args(endpoint, tmp_path, out)[1:-2],
              "view": [str(tmp_path / "judgments.jsonl")], "merge": [str(tmp_path)],
              "import auto-argue": [str(tmp_path / "auto.jsonl"), "--nuggets", str(EXAMPLES / "nuggets")],
              "score": [str(tmp_path / "judgments.jsonl")], "calibrate": [],
              "export auto-argue": [str(tmp_path / "judgments.jsonl"), "--nuggets", str(EXAMPLES / "nuggets")],
              "baseline rouge": [str(EXAMPLES / "reports"), "--gold", str(EXAMPLES / "gold")]}[command]
    code, lines, output = _run([*command.split(), "--out", str(out), *inputs])
    assert code == 2 and len(lines) == 1, output
    assert "--out" in lines[0] and f"{afile} is a file, not a folder" in lines[0]
    assert endpoint.calls == 0


@pytest.fixture
def tiny_disk(tmp_path):
    """A 24 KiB tmpfs: the bundled example's judgments (about 40 KB) do not fit."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if shutil.which("mount") is None or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=24k", "tmpfs", str(mount)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_eval_on_a_full_disk_is_one_line_naming_the_file(tmp_path, endpoint, tiny_disk):
    code, lines, output = _run(_eval_args(endpoint, tmp_path, tiny_disk / "out"))
    assert code == 6 and len(lines) == 1, output
    assert str(tiny_disk / "out") in lines[0] and "No space left on device" in lines[0]
