"""A file in a reports folder that cannot be read is an input error naming it, never left out.

Before, `expand_paths` kept only `p.is_file()`: a symlink loop or a dangling symlink named `*.jsonl` vanished
from the run while the console said "Judging 6 reports of 3 runs".
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.errors import InputError
from judge.formats._jsonl import expand_paths

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _reports_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "reports"
    shutil.copytree(EXAMPLES / "reports", folder)
    return folder


def _loop(folder: Path) -> Path:
    link = folder / "loop.jsonl"
    link.symlink_to(link.name)
    return link


def _dangling(folder: Path) -> Path:
    link = folder / "moved.jsonl"
    link.symlink_to(folder / "no-longer-here.jsonl")
    return link


def _directory(folder: Path) -> Path:
    odd = folder / "archive.jsonl"
    odd.mkdir()
    return odd


@pytest.mark.parametrize("make,fragment", [(_loop, "symlink loop"), (_dangling, "symlink to a missing file"),
                                           (_directory, "not a regular file")],
                         ids=["symlink-loop", "dangling-symlink", "directory-named-jsonl"])
def test_an_unreadable_report_file_is_named(make, fragment, tmp_path):
    folder = _reports_folder(tmp_path)
    bad = make(folder)
    with pytest.raises(InputError) as raised:
        expand_paths(folder)
    assert raised.value.path == str(bad) and fragment in raised.value.message


def test_a_report_file_without_read_permission_is_named(tmp_path, monkeypatch):
    folder = _reports_folder(tmp_path)
    bad = folder / "locked.jsonl"
    bad.write_text((EXAMPLES / "reports" / "run-cited.jsonl").read_text())
    bad.chmod(0)
    if os.geteuid() == 0:  # root reads it anyway: let the permission check see what another user would
        monkeypatch.setattr("judge.formats._jsonl.os.access", lambda path, mode: Path(path) != bad)
    with pytest.raises(InputError, match="permission denied") as raised:
        expand_paths(folder)
    assert raised.value.path == str(bad)


def test_eval_refuses_a_reports_folder_with_a_dangling_link(tmp_path, endpoint):
    folder = _reports_folder(tmp_path)
    bad = _dangling(folder)
    result = CliRunner().invoke(app, [
        "eval", str(folder), "--requests", str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl"),
        "--model", "openai/fake", "--api-base", endpoint.api_base, "--api-key", "x",
        "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "out")])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and str(bad) in lines[0] and "symlink" in lines[0], result.stderr
    assert endpoint.calls == 0
