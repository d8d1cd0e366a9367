"""The streamed judgments file: on disk as each report completes, resumable after a kill, and finalised into the
exact bytes an uninterrupted run writes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from judge.errors import InputError
from judge.formats.atomic import WORK_DIR
from judge.formats.judgments import ReportJudgment, SentenceJudgment, write_judgments
from judge.judging.judgments_reader import iter_judgments
from judge.run.streaming import JudgmentStream

SIGNATURE = "argue-judge:test|judge:openai/fake"


def judgment(run: int, request: int, signature: str = SIGNATURE, text: str = "") -> ReportJudgment:
    sentences = [SentenceJudgment(index=i, text=text or f"Sentence {i} of run {run} on request {request} — é.",
                                  citations=[f"doc-{request}-{i}"] if i % 2 else [], outcome=3 if i % 2 else 4)
                 for i in range(3)]
    return ReportJudgment(run_id=f"run-{run}", request_id=f"req-{request:02d}", sentences=sentences,
                          assessor="openai/fake", signature=signature)


ALL = [judgment(r, q) for r in range(4) for q in range(6)]


def single_run_bytes(tmp_path: Path, judgments: list[ReportJudgment]) -> bytes:
    path = tmp_path / "single" / "judgments.jsonl"
    write_judgments(path, sorted(judgments, key=lambda j: j.key))
    return path.read_bytes()


def test_each_judgment_is_on_disk_as_soon_as_it_is_appended(tmp_path):
    path = tmp_path / "out" / "judgments.jsonl"
    with JudgmentStream.open(path, resume=False) as stream:
        for n, j in enumerate(ALL[:3], start=1):
            stream.append(j)
            on_disk = list(iter_judgments(path))  # another reader, while the run goes on
            assert len(on_disk) == n and on_disk[-1] == j


def test_finalise_writes_the_single_run_order_whatever_the_completion_order(tmp_path):
    shuffled = ALL[:]
    random.Random(7).shuffle(shuffled)
    path = tmp_path / "judgments.jsonl"
    stream = JudgmentStream.open(path, resume=False)
    for j in shuffled:
        stream.append(j)
    assert path.read_bytes() != single_run_bytes(tmp_path, ALL)  # still the completion-order log
    assert stream.finalise() == path
    assert path.read_bytes() == single_run_bytes(tmp_path, ALL)
    assert not path.with_name(path.name + ".tmp").exists()
    with pytest.raises(ValueError, match="already closed"):
        stream.append(ALL[0])


def test_resume_reads_back_what_is_there_and_drops_a_half_written_line(tmp_path):
    path = tmp_path / "judgments.jsonl"
    with JudgmentStream.open(path, resume=False) as first:
        for j in ALL[:10]:
            first.append(j)
    complete = path.read_bytes()
    with path.open("ab") as log:  # the kill came in the middle of a write
        log.write(complete.splitlines(keepends=True)[0][:57])

    resumed = JudgmentStream.open(path, resume=True, signature=SIGNATURE)
    assert resumed.done() == {j.key for j in ALL[:10]} and len(resumed) == 10
    assert path.read_bytes() == complete  # the torn line is gone
    assert list(resumed.judgments()) == sorted(ALL[:10], key=lambda j: j.key)
    for j in ALL[10:]:
        if j.key not in resumed:
            resumed.append(j)
    resumed.finalise()
    assert path.read_bytes() == single_run_bytes(tmp_path, ALL)


def test_a_report_judged_again_supersedes_its_earlier_line(tmp_path):
    path = tmp_path / "judgments.jsonl"
    stream = JudgmentStream.open(path, resume=False)
    stream.append(judgment(0, 0, text="first attempt failed"))
    stream.append(judgment(0, 1))
    stream.append(judgment(0, 0))
    assert len(stream) == 2
    stream.finalise()
    assert path.read_bytes() == single_run_bytes(tmp_path, [judgment(0, 0), judgment(0, 1)])


def test_without_resume_the_log_starts_empty(tmp_path):
    path = tmp_path / "judgments.jsonl"
    write_judgments(path, ALL[:5])
    with JudgmentStream.open(path, resume=False) as stream:
        assert len(stream) == 0
    assert path.read_bytes() == b""


def test_resume_refuses_a_log_of_another_judge_configuration(tmp_path):
    path = tmp_path / "judgments.jsonl"
    write_judgments(path, [judgment(0, 0), judgment(0, 1, signature="argue-judge:test|judge:other")])
    with pytest.raises(InputError, match=r"judgments.jsonl:2: judged with another configuration"):
        JudgmentStream.open(path, resume=True, signature=SIGNATURE)


@pytest.mark.parametrize("line, message", [
    (b"{not json}\n", "malformed JSON"),
    (b'{"run_id": 3, "request_id": "q"}\n', "needs string run_id and request_id"),
])
def test_resume_refuses_a_damaged_line_naming_it(tmp_path, line, message):
    path = tmp_path / "judgments.jsonl"
    write_judgments(path, ALL[:2])
    with path.open("ab") as log:
        log.write(line)
    with path.open("ab") as log:
        log.write(path.read_bytes().splitlines(keepends=True)[0])
    with pytest.raises(InputError, match=rf"judgments.jsonl:3: .*{message}"):
        JudgmentStream.open(path, resume=True)


CHILD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[2])
    from tests.test_streaming import ALL
    from judge.run.streaming import JudgmentStream
    stream = JudgmentStream.open(sys.argv[1], resume=False)
    for n, j in enumerate(ALL):
        stream.append(j)
        print(n + 1, flush=True)
        time.sleep(0.05 if n < 5 else 60)  # after 6 reports the run hangs until it is killed
""")


def test_kill_9_loses_nothing_already_appended_and_resumes_to_the_same_bytes(tmp_path):
    path = tmp_path / "judgments.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(Path(__file__).parent)],
                             stdout=subprocess.PIPE, text=True, env=env)
    try:
        for _ in range(6):
            assert child.stdout.readline().strip()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL

    resumed = JudgmentStream.open(path, resume=True, signature=SIGNATURE)
    assert resumed.done() == {j.key for j in ALL[:6]}
    for j in ALL:
        if j.key not in resumed:
            resumed.append(j)
    resumed.finalise()
    assert path.read_bytes() == single_run_bytes(tmp_path, ALL)


# -- through eval ---------------------------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
STABLE = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")


def _eval_args(api_base: str, cache: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
            "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
            "--api-base", api_base, "--api-key", "x", "--cache", str(cache), "--out", str(out), *extra]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    from typer.testing import CliRunner

    from judge.cli.app import app
    from judge.testing import FakeEndpoint
    from tests.conftest import smart_responder

    root = tmp_path_factory.mktemp("uninterrupted")
    with FakeEndpoint(smart_responder) as ep:
        result = CliRunner().invoke(app, _eval_args(ep.api_base, root / "cache", root / "out"))
        assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"
        return root / "out", ep.calls


def test_eval_writes_each_reports_judgment_before_the_run_ends(uninterrupted, tmp_path):
    """One report's decisions are held back by the server; the other reports' judgments are on disk meanwhile."""
    import threading

    from judge.formats import read_reports
    from judge.run.evaluate import evaluate
    from judge.run.inputs import Inputs
    from judge.run.spec import EvalSpec
    from judge.settings import ModelSettings
    from judge.testing import FakeEndpoint
    from tests.conftest import smart_responder

    reports = read_reports([EXAMPLES / "reports"])
    held = next(r for r in reports if r.run_id == "run-padded")
    others = " ".join(s.text for r in reports if r is not held for s in r.sentences)
    marker = next(s.text for s in held.sentences if s.text not in others)  # only this report asks about it
    release = threading.Event()

    def responder(request: dict) -> object:
        if any(marker in str(m.get("content")) for m in request.get("messages", [])):
            release.wait(60)
        return smart_responder(request)

    out = tmp_path / "out"
    with FakeEndpoint(responder) as ep, Inputs.load([EXAMPLES / "reports"], EXAMPLES / "requests.jsonl",
                                                   [EXAMPLES / "nuggets"], [EXAMPLES / "docs.jsonl"],
                                                   tmp_path / "docstore") as inputs:
        # room for every decision at once: the held report's (its whole text is in each repeated-claim prompt)
        # must not take the slots the other reports need
        config = EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x"), cache=tmp_path / "cache",
                             concurrency=64)
        result: dict = {}
        worker = threading.Thread(target=lambda: result.update(evaluation=evaluate(inputs, config, out=out)))
        worker.start()
        try:
            on_disk: list[ReportJudgment] = []
            for _ in range(600):  # up to 30 s
                log = out / WORK_DIR / "judgments.jsonl"  # the run's log, in its working folder until it ends
                text = log.read_text(encoding="utf-8") if log.exists() else ""
                on_disk = list(iter_judgments(text)) if text.strip() else []
                if len(on_disk) == len(reports) - 1:
                    break
                release.wait(0.05)
            assert worker.is_alive()  # the run has not ended ...
            assert sorted(j.key for j in on_disk) == sorted(r.key for r in reports if r is not held)  # ... yet
        finally:
            release.set()
            worker.join(60)
    assert held.key in {j.key for j in result["evaluation"].judgments}
    # finalised into the single-run order (in the working folder, until write_outputs moves it into place): the
    # very bytes of an uninterrupted CLI run
    final = result["evaluation"].judgments_path
    assert final == out / WORK_DIR / "judgments.jsonl"
    assert final.read_bytes() == (uninterrupted[0] / "judgments.jsonl").read_bytes()


KILLED_EVAL = textwrap.dedent("""
    import sys
    from judge.cli.app import main
    sys.argv = ["argue-judge", *sys.argv[1:]]
    main()
""")


def test_eval_killed_with_9_resumes_to_the_same_bytes_asking_only_what_was_not_judged(uninterrupted, tmp_path):
    from typer.testing import CliRunner

    from judge.cli.app import app
    from judge.testing import FakeEndpoint
    from tests.conftest import smart_responder

    reference, total_calls = uninterrupted
    out, cache = tmp_path / "out", tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    with FakeEndpoint(smart_responder, latency=0.3) as ep:
        child = subprocess.Popen([sys.executable, "-c", KILLED_EVAL, *_eval_args(ep.api_base, cache, out, "-j", "1")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            for _ in range(1200):  # wait (up to 60 s) for two complete reports on disk, then kill -9
                log = out / WORK_DIR / "judgments.jsonl"  # the run's log, in its working folder until it ends
                if log.exists() and log.read_bytes().count(b"\n") >= 2:
                    break
                if child.poll() is not None:
                    pytest.fail(f"eval ended (exit {child.returncode}) before it could be killed")
                time.sleep(0.05)
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        asked_before_kill = ep.calls
        assert 0 < asked_before_kill < total_calls
        ep.latency = 0.0
        result = CliRunner().invoke(app, _eval_args(ep.api_base, cache, out, "--resume"))
        assert result.exit_code == 0, f"{result.exception!r}\n{result.output}"
        asked_on_resume = ep.calls - asked_before_kill
    for name in STABLE:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name
    summary = __import__("json").loads((out / "run-summary.json").read_text(encoding="utf-8"))
    assert summary["run"]["resumed_reports"] >= 2  # taken from the log, not judged again
    # calls on resume: at most the decisions the killed run had not answered (one was in flight at -j 1)
    assert asked_on_resume <= total_calls - asked_before_kill + 1


def test_failures_of_reports_judged_together_are_all_read_and_the_first_raised():
    """Two requests over --max-cost at once: the run stops with the first error, and the second is read too, not
    printed with its traceback as "Task exception was never retrieved" when Python collects its task."""
    import asyncio
    import gc

    from judge.errors import BudgetExceeded
    from judge.run.executors import run_bounded

    unread: list[dict] = []

    async def fail(n: int) -> None:
        raise BudgetExceeded(f"request {n} over budget")

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: unread.append(context))
        with pytest.raises(BudgetExceeded, match="over budget"):
            await run_bounded((fail(n) for n in range(3)), limit=3)
        await asyncio.sleep(0)
        gc.collect()

    asyncio.run(main())
    assert unread == []


def test_resume_after_an_outage_asks_the_failed_decisions_again(uninterrupted, tmp_path):
    """Failed decisions are never cached, and --resume judges a report with one again, so once
    the server is back the resumed run ends as the undisturbed run did (no failure), byte for byte."""

    from judge.run.evaluate import evaluate
    from judge.run.inputs import Inputs
    from judge.run.outputs import write_outputs
    from judge.run.spec import EvalSpec
    from judge.settings import ModelSettings, RetryPolicy
    from judge.testing import FakeEndpoint
    from tests.conftest import smart_responder

    reference, _ = uninterrupted
    out = tmp_path / "out"
    with FakeEndpoint(smart_responder) as ep, Inputs.load([EXAMPLES / "reports"], EXAMPLES / "requests.jsonl",
                                                         [EXAMPLES / "nuggets"], [EXAMPLES / "docs.jsonl"],
                                                         tmp_path / "docstore") as inputs:
        config = EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x"), cache=tmp_path / "cache",
                             retry=RetryPolicy(transport_attempts=2, wait_multiplier=0.01, wait_max=0.05),
                             concurrency=1)
        ep.fail_next([500] * 12)  # an outage: 6 decisions in a row spend both their attempts on it
        outage = evaluate(inputs, config, out=out)
        write_outputs(outage, out)
        assert outage.usage.failures == 6 and outage.signature.failed > 0
        ep.reset()  # the server is back
        resumed = evaluate(inputs, config.but(resume=True), out=out)
        write_outputs(resumed, out)
        asked = ep.calls
    assert resumed.usage.failures == 0 and resumed.signature.failed == 0
    assert 6 <= asked == resumed.usage.model_calls  # the failed ones (and what their answers lead to), not all
    assert resumed.run["resumed_reports"] >= 1  # reports without a failure are kept as they were
    for name in STABLE:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name
