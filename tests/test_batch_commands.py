"""--batch on the commands that ask a model besides eval (nuggets create, nuggets pool, calibrate), against the fake
batch API (judge.testing.batch_server): the files the online path writes, byte for byte; failed and expired lines
asked again in the next round; a killed command that polls its jobs instead of paying twice; and eval's one-line
refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.llm.batch import JOURNAL, BatchJournal
from judge.testing import FakeEndpoint
from judge.testing.batch_server import FakeBatchServer
from judge.testing.nugget_responders import nugget_responder
from tests.test_batch import FailOnce, kill_once_submitted
from tests.test_eval_e2e import run_cli
from tests.test_nuggets import BANKS, DOCS, REQUESTS, _pool_inputs

POLL = ("--batch", "--batch-poll", "0.05")


@pytest.fixture
def servers():
    with FakeEndpoint(nugget_responder) as chat, FakeBatchServer(chat, turnaround=0.05) as batches:
        yield batches


def model(server: FakeBatchServer, cache: Path) -> list[str]:
    """One address for online and batch calls, as a provider has."""
    return ["--model", "openai/fake", "--api-base", server.api_base, "--api-key", "x", "--cache", str(cache)]


def create_args(server: FakeBatchServer, cache: Path, out: Path, *extra: str) -> list[str]:
    return ["nuggets", "create", "--requests", str(REQUESTS), "--docs", str(DOCS), "--out", str(out),
            "--max-nuggets", "3", "--max-docs", "2", *model(server, cache), *extra]


def pool_args(server: FakeBatchServer, cache: Path, inputs: Path, out: Path, *extra: str) -> list[str]:
    docs, reports = _pool_inputs(inputs) if not (inputs / "docs.jsonl").exists() else (
        inputs / "docs.jsonl", inputs / "reports.jsonl")
    return ["nuggets", "pool", "--nuggets", str(BANKS), "--reports", str(reports), "--requests", str(REQUESTS),
            "--docs", str(docs), "--out", str(out), *model(server, cache), *extra]


def calibrate_args(server: FakeBatchServer, cache: Path, out: Path, *extra: str) -> list[str]:
    return ["calibrate", "--nuggets", str(BANKS), "--docs", str(DOCS), "--n-boot", "50", "--no-plots",
            "--out", str(out), *model(server, cache), *extra]


def files(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` but the summaries (they hold seconds, counts of calls and the batch record) and the
    record of the hashes written (which holds the summary's)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith(".summary.json") and not p.name.startswith(".argue-")}


def test_create_through_batch_jobs_writes_the_online_bytes(servers, tmp_path):
    run_cli(create_args(servers, tmp_path / "c-online", tmp_path / "online" / "banks"))
    online_calls = servers.chat.calls
    assert servers.submitted == 0 and online_calls > 0
    result = run_cli(create_args(servers, tmp_path / "c-batch", tmp_path / "batch" / "banks", *POLL))
    online, batch = files(tmp_path / "online"), files(tmp_path / "batch")
    assert "banks.review.jsonl" in batch and "banks/nuggets_ex-101.v3.json" in batch
    assert batch == online  # the banks and the review, byte for byte
    # every decision went through a job, none online: the lines served are the online run's calls
    assert servers.chat.calls - online_calls == servers.lines_served == online_calls
    summary = json.loads((tmp_path / "batch" / "banks.summary.json").read_text())
    rounds = summary["batch"]
    # relevance, drafting, binding: rounds, not a job per decision (both requests' questions share each round)
    assert 3 <= rounds["rounds"] <= 6 and rounds["jobs"] == rounds["rounds"] and rounds["failed_lines"] == 0, rounds
    assert rounds["requests"] == online_calls
    assert f"batch: {rounds['rounds']} rounds, {rounds['jobs']} jobs submitted" in " ".join(result.output.split())
    assert not (tmp_path / "batch" / "banks" / ".argue-run").exists()  # the journal goes with the finished command


def test_pool_asks_failed_and_expired_lines_again_and_writes_the_online_bytes(servers, tmp_path):
    (tmp_path / "in").mkdir()
    run_cli(pool_args(servers, tmp_path / "c-online", tmp_path / "in", tmp_path / "online" / "cands.jsonl"))
    failed_once = FailOnce(every=3)
    servers.fail_ids(failed_once)
    servers.expire_next(1)
    run_cli(pool_args(servers, tmp_path / "c-batch", tmp_path / "in", tmp_path / "batch" / "cands.jsonl", *POLL))
    online, batch = files(tmp_path / "online"), files(tmp_path / "batch")
    assert {"cands.jsonl", "cands.jsonl.refused.jsonl", "cands.jsonl.html"} <= set(batch)
    assert batch == online
    summary = json.loads((tmp_path / "batch" / "cands.jsonl.summary.json").read_text())
    assert "expired" in [job["status"] for job in servers.jobs] and failed_once
    # each line that came back without an answer was asked again in a later round; none ended a failed decision
    assert summary["batch"]["failed_lines"] >= len(failed_once) + 1
    assert summary["calls"]["failed"] == 0 and summary["counts"]["failed"] == 0
    assert not (tmp_path / "batch" / ".argue-run").exists()


def test_calibrate_through_batch_jobs_measures_what_online_measures(servers, tmp_path):
    run_cli(calibrate_args(servers, tmp_path / "c-online", tmp_path / "online"))
    online_calls = servers.chat.calls
    result = run_cli(calibrate_args(servers, tmp_path / "c-batch", tmp_path / "batch", *POLL))
    online, batch = files(tmp_path / "online"), files(tmp_path / "batch")
    assert {"calibration.json", "items.jsonl", "calibration.md"} <= set(batch)
    assert batch == online
    assert servers.lines_served == online_calls
    said = " ".join(result.output.split())
    assert "batch: 1 rounds, 1 jobs submitted" in said  # every item asked at once: one round
    assert not (tmp_path / "batch" / ".argue-run").exists()


def test_a_killed_create_polls_its_jobs_instead_of_submitting_them_again(tmp_path):
    """The command is killed (SIGKILL) while its first job runs; started again, it finds the job in its journal
    under --out, polls it, and submits none of its requests again: every line is served once."""
    with FakeEndpoint(nugget_responder) as chat, FakeBatchServer(chat, turnaround=4.0) as servers:
        out = tmp_path / "banks"
        args = create_args(servers, tmp_path / "cache", out, "--batch", "--batch-poll", "0.1")
        journal = out / ".argue-run" / JOURNAL
        kill_once_submitted(args, journal, servers)
        (first_ids,) = [job["ids"] for job in BatchJournal(journal).jobs.values()]

        run_cli(args)
        summary = json.loads((tmp_path / "banks.summary.json").read_text())
        assert summary["batch"]["resumed_jobs"] == 1
        submitted = [json.loads(line)["custom_id"] for job in servers.jobs[1:]
                     for line in servers._file(job["input_file_id"]).decode().splitlines()]
        assert not first_ids & set(submitted), "a request of the killed command's job was submitted again"
        assert servers.lines_served == chat.calls == len(first_ids) + len(submitted)
        assert not journal.exists()


COMMANDS = {
    "create": lambda tmp: ["nuggets", "create", "--requests", str(REQUESTS), "--docs", str(DOCS),
                           "--out", str(tmp / "banks")],
    "pool": lambda tmp: ["nuggets", "pool", "--nuggets", str(BANKS), "--reports", str(REQUESTS),
                         "--requests", str(REQUESTS), "--docs", str(DOCS), "--out", str(tmp / "cands.jsonl")],
    "calibrate": lambda tmp: ["calibrate", "--nuggets", str(BANKS), "--docs", str(DOCS), "--out", str(tmp / "cal")],
}
REFUSALS = [
    ([], 3, "--batch needs a hosted model with a batch API"),
    (["--model", "anthropic/claude-x", "--api-key", "x"], 3,
     "batch jobs work with the providers openai, azure, hosted_vllm, litellm_proxy"),
]  # these commands take one --api-base: several servers (a Router) come only through the API, refused below


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(("extra", "code", "says"), REFUSALS)
def test_batch_refusals_are_eval_s_one_line(tmp_path, command, extra, code, says):
    result = run_cli([*COMMANDS[command](tmp_path), "--batch", *extra], code=code)
    assert says in " ".join(result.output.split()) and "Traceback" not in result.output
    assert not [p for p in tmp_path.rglob("*") if p.is_file()], "nothing is written before the refusal"


def test_batch_where_no_model_is_asked_is_refused(tmp_path):
    reviewed = tmp_path / "reviewed.jsonl"
    reviewed.write_text("")
    result = run_cli(["nuggets", "pool", "--nuggets", str(BANKS), "--accept", str(reviewed),
                      "--out", str(tmp_path / "extended"), "--batch"], code=2)
    assert "--batch would be ignored: --accept judges nothing" in " ".join(result.output.split())
    judgments = tmp_path / "j.jsonl"
    judgments.write_text("")
    result = run_cli(["calibrate", "--human", str(judgments), "--judged", str(judgments), "--out",
                      str(tmp_path / "cal"), "--model", "openai/fake", "--batch"], code=2)
    assert "batch apply to the judge asked about items" in " ".join(result.output.split())


def test_the_api_takes_batch_and_refuses_it_in_one_line():
    import judge
    from judge.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="--batch needs a hosted model"):
        judge.create_nuggets(requests=REQUESTS, docs=DOCS, batch=True, cache=None)
    with pytest.raises(ConfigurationError, match="batch jobs work with the providers"):
        judge.pool_nuggets(nuggets=BANKS, reports=REQUESTS, requests=REQUESTS, docs=DOCS, batch=True, cache=None,
                           model="anthropic/claude-x", api_key="x")
    with pytest.raises(ConfigurationError, match="--batch needs a hosted model"):
        judge.calibrate(nuggets=BANKS, docs=DOCS, batch=True, cache=None)
    with pytest.raises(ConfigurationError, match="--batch submits its jobs to one server"):
        judge.calibrate(nuggets=BANKS, docs=DOCS, batch=True, cache=None, model="openai/fake", api_key="x",
                        api_bases=("http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"))
