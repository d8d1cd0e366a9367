"""`argue-judge cache ...` never claims what it did not do, never creates a mistyped cache, never shows a
traceback.

Before: `cache clear` on a cache it could not write said "removed the unreadable decision cache database" while
the database was still there; `cache stats` and `cache export` on a mistyped path created that folder and reported
0 decisions; `cache export` of a corrupt database, or into a missing folder, and `cache import` of a file that is
not UTF-8 ended in tracebacks.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import diskcache
import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.llm.cache.store import CachedAnswer, open_decision_cache


def _run(*args: str) -> tuple[int, list[str], str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    return result.exit_code, [line for line in result.stderr.splitlines() if line.strip()], output


def _cache_with_one_entry(directory: Path) -> Path:
    cache = open_decision_cache(directory)
    cache.put("0" * 64, CachedAnswer(response={"verdict": "supported"}))
    cache.close()
    return directory / "decisions" / "cache.db"


def _corrupt_cache(directory: Path) -> Path:
    database = directory / "decisions" / "cache.db"
    database.parent.mkdir(parents=True)
    database.write_bytes(b"this is not an sqlite database" * 1000)
    return database


def test_clear_of_a_cache_that_cannot_be_written_says_so_and_keeps_it(tmp_path, monkeypatch):
    database = _cache_with_one_entry(tmp_path / "cache")

    def read_only(self: diskcache.Cache) -> int:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(diskcache.Cache, "clear", read_only)
    code, lines, output = _run("cache", "clear", "--cache", str(tmp_path / "cache"), "--yes")
    assert code == 6 and len(lines) == 1, output
    assert "readonly database" in lines[0] and "nothing was removed" in lines[0]
    assert "removed 1" not in output and database.is_file()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes a read-only file")
def test_clear_of_a_read_only_cache_directory_says_so(tmp_path):
    database = _cache_with_one_entry(tmp_path / "cache")
    for path in (database, database.parent, database.parent.parent):
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        code, lines, output = _run("cache", "clear", "--cache", str(tmp_path / "cache"), "--yes")
    finally:
        for path in (database.parent.parent, database.parent, database):
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert code == 6 and len(lines) == 1 and database.is_file(), output


def test_clear_of_an_unreadable_database_that_cannot_be_removed_says_so(tmp_path, monkeypatch):
    database = _corrupt_cache(tmp_path / "cache")

    def refuse(path: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("judge.llm.cache.store.shutil.rmtree", refuse)
    code, lines, output = _run("cache", "clear", "--cache", str(tmp_path / "cache"), "--yes")
    assert code == 6 and len(lines) == 1 and "Permission denied" in lines[0], output
    assert "removed the unreadable" not in output and database.is_file()


def test_clear_of_an_unreadable_database_removes_it_and_says_so(tmp_path):
    database = _corrupt_cache(tmp_path / "cache")
    code, _, output = _run("cache", "clear", "--cache", str(tmp_path / "cache"), "--yes")
    assert code == 0 and "removed the unreadable decision cache" in output and not database.exists()


@pytest.mark.parametrize("command", [("stats",), ("export",), ("clear", "--yes")], ids=["stats", "export", "clear"])
@pytest.mark.parametrize("existing", [False, True], ids=["missing-folder", "folder-without-cache"])
def test_a_mistyped_cache_path_is_an_input_error_and_is_not_created(command, existing, tmp_path):
    typo = tmp_path / "cahce"
    if existing:
        typo.mkdir()
    code, lines, output = _run("cache", *command, "--cache", str(typo))
    assert code == 2 and len(lines) == 1 and str(typo) in lines[0] and "--cache" in lines[0], output
    assert typo.exists() == existing and (not existing or list(typo.iterdir()) == [])


def test_export_of_a_corrupt_database_is_a_configuration_error(tmp_path):
    _corrupt_cache(tmp_path / "cache")
    code, lines, output = _run("cache", "export", "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "x"))
    assert code == 3 and len(lines) == 1 and "cache clear" in lines[0], output
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("parent", ["missing", "a-file"])
def test_export_into_a_folder_that_is_not_there_names_out(parent, tmp_path):
    _cache_with_one_entry(tmp_path / "cache")
    if parent == "a-file":
        (tmp_path / parent).write_text("x")
    out = tmp_path / parent / "export.jsonl"
    code, lines, output = _run("cache", "export", "--cache", str(tmp_path / "cache"), "--out", str(out))
    assert code == 2 and len(lines) == 1 and "--out" in lines[0] and str(out.parent) in lines[0], output
    assert not (tmp_path / "missing").exists()


def test_export_then_import_round_trip_still_works(tmp_path):
    _cache_with_one_entry(tmp_path / "cache")
    out = tmp_path / "export.jsonl"
    assert _run("cache", "export", "--cache", str(tmp_path / "cache"), "--out", str(out))[0] == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file left
    code, _, output = _run("cache", "import", str(out), "--cache", str(tmp_path / "other"))
    assert code == 0 and "1 added" in output


def test_import_of_invalid_utf8_names_the_file_and_line(tmp_path):
    bad = tmp_path / "export.jsonl"
    bad.write_bytes(b'{"format": "argue-judge-cache/1"}\n{"key": "\xff\xfe"}\n')
    code, lines, output = _run("cache", "import", str(bad), "--cache", str(tmp_path / "cache"))
    assert code == 2 and len(lines) == 1 and f"{bad}:2:" in lines[0] and "UTF-8" in lines[0], output


@pytest.mark.parametrize("command, method, code", [
    (("cache", "stats"), "__len__", 3),      # reading: an unreadable cache (configuration)
    (("cache", "export"), "__iter__", 3),
    (("cache", "clear", "--yes"), "clear", 6),   # writing: the cache could not be changed (output)
])
def test_a_store_failing_mid_command_is_one_line(tmp_path, monkeypatch, command, method, code):
    _cache_with_one_entry(tmp_path / "cache")

    def locked(self: diskcache.Cache, *args: object) -> int:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(diskcache.Cache, method, locked)
    exit_code, lines, output = _run(*command, "--cache", str(tmp_path / "cache"))
    assert exit_code == code and len(lines) == 1 and "database is locked" in lines[0], output
