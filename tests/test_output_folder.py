"""Lost data: what a rerun, a killed rerun, a concurrent run and a configuration error do to an `--out`
that holds a finished run (docs/output-folder.md). Everything runs against the local FakeEndpoint on the bundled
example; the killed and concurrent runs are CLI subprocesses."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.api import read_judgments
from judge.cli.app import app
from judge.errors import InputError, OutputError
from judge.formats.atomic import WORK_DIR, WorkingFolder
from judge.formats.lock import LOCK_NAME, output_lock
from judge.run.outputs import OUTPUT_NAMES
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
STABLE = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")
CLI = textwrap.dedent("""
    import sys
    from judge.cli.app import main
    sys.argv = ["argue-judge", *sys.argv[1:]]
    main()
""")
runner = CliRunner()


def eval_args(api_base: str, cache: str | Path, out: Path, *extra: str) -> list[str]:
    return ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
            "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
            "--api-base", api_base, "--api-key", "x", "--cache", str(cache), "--out", str(out), *extra]


def outputs(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in OUTPUT_NAMES}


def start_cli(args: list[str], stderr: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with stderr.open("w") as errors:  # the child keeps its own copy of the handle
        return subprocess.Popen([sys.executable, "-c", CLI, *args], stdout=subprocess.DEVNULL, stderr=errors,
                                env=env)


def wait_for(condition, child: subprocess.Popen, what: str, stderr: Path, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if child.poll() is not None:
            pytest.fail(f"the child ended (exit {child.returncode}) before {what}: {_text(stderr)[-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {seconds} s")
        time.sleep(0.05)


def stderr_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run of the example: (its --out, its cache); tests work on copies."""
    root = tmp_path_factory.mktemp("finished")
    with FakeEndpoint(smart_responder) as ep:
        result = runner.invoke(app, eval_args(ep.api_base, root / "cache", root / "out"))
        assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"
    return root / "out", root / "cache"


def copy_of(finished_out: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(finished_out, out)
    return out


# -- item 1: a finished run's files are replaced only by another finished run ----------------------------------

def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("problem", ["corrupt cache", "unreachable redis"])
def test_a_configuration_error_leaves_a_finished_out_as_it_was(finished, tmp_path, monkeypatch, problem):
    out = copy_of(finished[0], tmp_path)
    before = outputs(out)
    if problem == "corrupt cache":
        cache: str | Path = tmp_path / "cache"
        (tmp_path / "cache" / "decisions").mkdir(parents=True)
        (tmp_path / "cache" / "decisions" / "cache.db").write_bytes(b"this is not a database" * 100)
    else:
        cache = f"redis://127.0.0.1:{_free_port()}/0"
        monkeypatch.chdir(tmp_path)  # with a Redis cache the document index goes to ./caches
    with FakeEndpoint(smart_responder) as ep:
        result = runner.invoke(app, eval_args(ep.api_base, cache, out))
        assert ep.calls == 0
    assert result.exit_code == 3, result.output
    assert "configuration error" in stderr_line(result)
    assert outputs(out) == before
    assert not (out / WORK_DIR).exists()


def test_a_rerun_killed_with_9_leaves_the_finished_run_whole_and_resume_finishes_it(finished, tmp_path):
    out = copy_of(finished[0], tmp_path)
    before = outputs(out)
    cache = tmp_path / "cache"
    shutil.copytree(finished[1], cache)  # another --seed: none of its decisions are in it
    log = out / WORK_DIR / "judgments.jsonl"
    with FakeEndpoint(smart_responder, latency=0.2) as ep:
        child = start_cli(eval_args(ep.api_base, cache, out, "--seed", "1", "-j", "1"), tmp_path / "stderr.txt")
        try:
            wait_for(lambda: log.exists() and log.read_bytes().count(b"\n") >= 2, child, "two reports judged",
                     tmp_path / "stderr.txt")
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        assert outputs(out) == before  # every file of the finished run, byte for byte
        ep.latency = 0.0
        asked_before = ep.calls
        resumed = runner.invoke(app, eval_args(ep.api_base, cache, out, "--seed", "1", "--resume"))
        assert resumed.exit_code == 0, f"{resumed.exception!r}\n{resumed.output}"
        asked_on_resume = ep.calls - asked_before
        fresh = runner.invoke(app, eval_args(ep.api_base, cache, tmp_path / "fresh", "--seed", "1"))
        assert fresh.exit_code == 0, fresh.output
    assert json.loads((out / "run-summary.json").read_text(encoding="utf-8"))["run"]["resumed_reports"] >= 2
    assert asked_on_resume > 0
    for name in STABLE:  # the resumed run is the seed-1 run, not a mix with the finished seed-0 one
        assert (out / name).read_bytes() == (tmp_path / "fresh" / name).read_bytes(), name
    assert all("seed:1" in j.signature for j in read_judgments(out / "judgments.jsonl"))
    assert not (out / WORK_DIR).exists()


def test_resume_of_a_finished_run_keeps_every_report(finished, tmp_path):
    out = copy_of(finished[0], tmp_path)
    with FakeEndpoint(smart_responder) as ep:
        result = runner.invoke(app, eval_args(ep.api_base, tmp_path / "empty-cache", out, "--resume"))
        assert result.exit_code == 0, result.output
        assert ep.calls == 0  # nothing asked: every report came from the finished judgments.jsonl
    for name in STABLE:
        assert (out / name).read_bytes() == (finished[0] / name).read_bytes(), name


def test_a_commit_cut_short_is_finished_by_the_next_command(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    for name in ("a.txt", "b.txt"):
        (out / name).write_text(f"old {name}", encoding="utf-8")
    work = WorkingFolder(out)
    work.start()
    for name in ("a.txt", "b.txt"):
        work.file(name).write_text(f"new {name}", encoding="utf-8")
    real_replace, moved = os.replace, []

    def killed_after_one_rename(source, target):
        if Path(target).parent == out:  # the journal's own rename is in the working folder
            if moved:
                raise OSError(errno.EIO, "Input/output error", str(source))
            moved.append(target)
        real_replace(source, target)

    monkeypatch.setattr("judge.formats.atomic.os.replace", killed_after_one_rename)
    with pytest.raises(OutputError, match=r"cannot write .*b\.txt: Input/output error"):
        work.commit(["a.txt", "b.txt"])
    monkeypatch.undo()
    assert work.committing()  # half moved: the journal says what is left
    WorkingFolder(out).start()  # what the next eval or merge into `out` does first
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir() if p.is_file()} == \
        {"a.txt": "new a.txt", "b.txt": "new b.txt"}


# -- item 2: one command writes a folder at a time -------------------------------------------------------------

def test_a_second_command_into_a_folder_being_written_refuses_naming_the_first(finished, tmp_path):
    out = tmp_path / "out"
    with FakeEndpoint(smart_responder, latency=0.2) as ep:
        child = start_cli(eval_args(ep.api_base, tmp_path / "cache", out, "-j", "1"), tmp_path / "stderr.txt")
        try:
            wait_for(lambda: f'"pid": {child.pid}' in _text(out / LOCK_NAME), child, "lock taken",
                     tmp_path / "stderr.txt")
            holder = f"argue-judge eval (pid {child.pid}) is writing {out} since "
            refused = {
                "eval": runner.invoke(app, eval_args(ep.api_base, tmp_path / "cache-2", out)),
                "view": runner.invoke(app, ["view", str(finished[0] / "judgments.jsonl"), "--out", str(out)]),
                "merge": runner.invoke(app, ["merge", str(finished[0]), "--out", str(out)]),
                "score": runner.invoke(app, ["score", str(finished[0] / "judgments.jsonl"), "--out", str(out)]),
                "merge a shard being written": runner.invoke(app, ["merge", str(out), "--out", str(tmp_path / "m")]),
            }
            for command, result in refused.items():
                assert result.exit_code == 2, (command, result.output)
                assert holder in stderr_line(result), command
        finally:
            ep.latency = 0.0
            code = child.wait(timeout=120)
    assert code == 0
    for name in STABLE:  # the first run's outputs, untouched by the refused ones
        assert (out / name).read_bytes() == (finished[0] / name).read_bytes(), name


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


HOLD = textwrap.dedent("""
    import sys, time
    from judge.formats.lock import output_lock
    with output_lock(sys.argv[1], "eval"):
        print("held", flush=True)
        time.sleep(120)
""")


def test_the_lock_of_a_killed_holder_blocks_nobody_and_a_second_hold_in_one_process_is_refused(tmp_path):
    out = tmp_path / "out"
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(InputError, match=rf"argue-judge eval \(pid {child.pid}\) is writing {out} since \d{{4}}-"):
            with output_lock(out, "eval"):
                pass
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    with output_lock(out, "merge"):  # the dead holder's lock is gone with it
        assert '"command": "merge"' in (out / LOCK_NAME).read_text(encoding="utf-8")
        # one writer per folder, this process's second hold too (no command takes a lock it holds)
        with pytest.raises(InputError, match=rf"argue-judge merge \(pid {os.getpid()}\) is writing {out}"):
            with output_lock(out, "eval"):
                pass
        assert '"command": "merge"' in (out / LOCK_NAME).read_text(encoding="utf-8")  # the holder's, still
    assert (out / LOCK_NAME).read_text(encoding="utf-8") == ""  # released: no stale holder to report
