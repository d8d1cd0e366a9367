"""eval --batch: decisions asked through provider batch jobs (judge.llm.batch) against the fake batch API
(judge.testing.batch_server): the same judgments as online, failed and expired lines re-asked in the next round,
a killed run that polls its jobs instead of paying twice, and one-line refusals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judge.llm.batch import JOURNAL, BatchJournal, batch_cost, custom_id
from judge.testing import FakeEndpoint, smart_responder
from judge.testing.batch_server import FakeBatchServer
from tests.test_eval_e2e import EXAMPLES, eval_args, run_cli

OUTPUTS = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")


def batch_args(server: FakeBatchServer, cache: Path, out: Path, *extra: str) -> list[str]:
    args = eval_args(server.chat, cache, out, *extra)
    args[args.index("--api-base") + 1] = server.api_base  # one address for online and batch, as a provider has
    return args


@pytest.fixture
def servers():
    with FakeEndpoint(smart_responder) as chat, FakeBatchServer(chat, turnaround=0.05) as batches:
        yield batches


def test_batch_judgments_are_byte_identical_to_online(servers, tmp_path):
    run_cli(batch_args(servers, tmp_path / "c-online", tmp_path / "online"))
    online_calls = servers.chat.calls
    assert servers.submitted == 0
    result = run_cli(batch_args(servers, tmp_path / "c-batch", tmp_path / "batch", "--batch", "--batch-poll", "0.05"))
    for name in OUTPUTS:
        assert (tmp_path / "online" / name).read_bytes() == (tmp_path / "batch" / name).read_bytes(), name
    # Every decision went through a job, none online: the lines the jobs served are the online run's calls.
    assert servers.chat.calls - online_calls == servers.lines_served == online_calls
    summary = json.loads((tmp_path / "batch" / "run-summary.json").read_text())
    batch = summary["run"]["batch"]
    # The flowchart asks in rounds: support first, then what support leads to; never one job per decision.
    assert 2 <= batch["rounds"] <= 6 and batch["jobs"] == batch["rounds"], batch
    assert batch["requests"] == online_calls and batch["failed_lines"] == 0
    assert f"batch: {batch['rounds']} rounds, {batch['jobs']} jobs submitted" in result.output
    assert not (tmp_path / "batch" / ".argue-run").exists()  # the journal goes with the finished run's folder


class FailOnce:
    """A fake batch server's failure rule: the lines whose id hashes to a multiple of `every` fail, each once; its
    length is how many failed."""

    def __init__(self, every: int):
        self.every = every
        self.failed: set[str] = set()

    def __call__(self, request_id: str) -> bool:
        if request_id in self.failed or int(request_id[-4:], 16) % self.every:
            return False
        self.failed.add(request_id)
        return True

    def __len__(self) -> int:
        return len(self.failed)


def test_failed_and_expired_lines_are_asked_again_in_the_next_round(servers, tmp_path):
    run_cli(batch_args(servers, tmp_path / "c-online", tmp_path / "online"))
    failed_once = FailOnce(every=5)
    servers.fail_ids(failed_once)
    servers.expire_next(1)
    run_cli(batch_args(servers, tmp_path / "c-batch", tmp_path / "batch", "--batch", "--batch-poll", "0.05"))
    for name in OUTPUTS:
        assert (tmp_path / "online" / name).read_bytes() == (tmp_path / "batch" / name).read_bytes(), name
    summary = json.loads((tmp_path / "batch" / "run-summary.json").read_text())
    batch, usage = summary["run"]["batch"], summary["usage"]
    statuses = [job["status"] for job in servers.jobs]
    assert "expired" in statuses and failed_once
    # Each line that came back without an answer was asked again, and counted like an online transport retry.
    assert batch["failed_lines"] >= len(failed_once) + 1
    assert usage["transport_retries"] == batch["failed_lines"] and usage["failures"] == 0


def kill_once_submitted(args: list[str], journal: Path, servers: FakeBatchServer) -> None:
    """Run `argue-judge ARGS` in a process of its own and kill it (SIGKILL) once `journal` names its first job:
    submitted, not yet polled to the end."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])}
    driver = subprocess.Popen([sys.executable, "-m", "judge.cli.app", *args], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (journal.exists() and BatchJournal(journal).jobs) and time.monotonic() < deadline:
        time.sleep(0.05)  # the journal names the job once it is submitted, before the command polls it
    assert servers.submitted == 1, "the first round was never submitted"
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=60)


def test_a_killed_run_polls_its_jobs_instead_of_submitting_them_again(tmp_path):
    """The driver is killed (SIGKILL) while its first job runs; started again with --resume, it finds the job in
    its journal, polls it, and submits none of its requests again: every line is served once."""
    with FakeEndpoint(smart_responder) as chat, FakeBatchServer(chat, turnaround=4.0) as servers:
        args = batch_args(servers, tmp_path / "cache", tmp_path / "out", "--batch", "--batch-poll", "0.1")
        journal = tmp_path / "out" / ".argue-run" / JOURNAL
        kill_once_submitted(args, journal, servers)
        first_job = BatchJournal(journal).jobs
        assert len(first_job) == 1
        (first_ids,) = [job["ids"] for job in first_job.values()]

        run_cli(args + ["--resume"])
        summary = json.loads((tmp_path / "out" / "run-summary.json").read_text())
        assert summary["run"]["batch"]["resumed_jobs"] == 1
        submitted = [json.loads(line)["custom_id"] for job in servers.jobs[1:]
                     for line in servers._file(job["input_file_id"]).decode().splitlines()]
        assert not first_ids & set(submitted), "a request of the killed run's job was submitted again"
        assert servers.lines_served == chat.calls == len(first_ids) + len(submitted)


@pytest.mark.parametrize(("extra", "model", "code", "says"), [
    (["--batch"], None, 3, "--batch needs a hosted model with a batch API"),
    (["--batch"], "anthropic/claude-x", 3, "batch jobs work with the providers openai, azure, hosted_vllm"),
    (["--batch", "--ray", "local"], "openai/fake", 3, "--batch and --ray do not go together"),
    (["--dry-run"], "openai/fake", 2, "add --batch, or drop --dry-run"),
    (["--batch", "--api-base", "http://127.0.0.1:9/v1", "--api-base", "http://127.0.0.1:10/v1"], "openai/fake", 3,
     "--batch submits its jobs to one server"),
])
def test_batch_refusals_are_one_line(tmp_path, extra, model, code, says):
    args = ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
            "--docs", str(EXAMPLES / "docs.jsonl"), "--out", str(tmp_path / "out"), *extra]
    if model:
        args += ["--model", model, "--api-key", "x"]
    result = run_cli(args, code=code)
    assert says in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert not (tmp_path / "out" / "judgments.jsonl").exists()


def test_custom_ids_name_the_request_not_the_run():
    body = {"model": "m", "messages": [{"role": "user", "content": "q"}], "temperature": 0}
    assert custom_id(body) == custom_id(dict(reversed(list(body.items()))))
    assert custom_id(body) != custom_id({**body, "temperature": 0.5})


def test_the_journal_survives_a_cut_last_line_and_never_reuses_a_failed_line(tmp_path):
    path = tmp_path / JOURNAL
    journal = BatchJournal(path)
    journal.record("b1", ids=["a", "b"], status="in_progress")
    journal.record("b1", status="expired", failed=["b"])
    with path.open("a") as out:
        out.write('{"batch_id": "b2", "ids": ["c"')  # a kill mid-write
    again = BatchJournal(path)
    assert again.job_of("a") == "b1"       # answered: read from the job, not paid twice
    assert again.job_of("b") is None       # failed there: asked in a new job
    assert again.job_of("c") is None


def test_the_batch_price_is_litellms_batch_price_or_half_the_online_one():
    import litellm

    assert batch_cost("gpt-4o-mini", 1000, 100) == pytest.approx(
        1000 * litellm.model_cost["gpt-4o-mini"]["input_cost_per_token_batches"]
        + 100 * litellm.model_cost["gpt-4o-mini"]["output_cost_per_token_batches"])
    online_in, online_out = litellm.cost_per_token(model="gpt-4o-mini", prompt_tokens=1000, completion_tokens=100)
    assert batch_cost("gpt-4o-mini", 1000, 100) == pytest.approx(0.5 * (online_in + online_out))
    assert batch_cost("openai/no-such-model-xyz", 10, 10) is None


def test_dry_run_bounds_the_real_run_and_submits_nothing(servers, tmp_path):
    dry = run_cli(batch_args(servers, tmp_path / "cache", tmp_path / "out", "--batch", "--dry-run"))
    assert servers.submitted == 0 and servers.chat.calls == 0
    assert not (tmp_path / "out").exists()
    line = " ".join(dry.output.split())
    assert "nothing was submitted" in line
    run_cli(batch_args(servers, tmp_path / "cache", tmp_path / "out", "--batch", "--batch-poll", "0.05"))
    batch = json.loads((tmp_path / "out" / "run-summary.json").read_text())["run"]["batch"]
    import judge

    plan = judge.plan_batch(str(EXAMPLES / "reports"), requests=str(EXAMPLES / "requests.jsonl"),
                            docs=str(EXAMPLES / "docs.jsonl"), nuggets=str(EXAMPLES / "nuggets"),
                            model="openai/fake", cache=None)
    assert f"at most {plan.requests} requests in at most {plan.rounds} rounds" in line
    # Bounds: the real run asked no more, in no more rounds, than the plan said.
    assert batch["requests"] <= plan.requests and batch["rounds"] <= plan.rounds
    assert plan.sentences == 29 and plan.cost is None  # openai/fake has no price: said, not guessed
