"""`eval --ray` on a real local Ray runtime (2 CPUs, loopback only, one per module: it takes seconds to start)
against the fake endpoint: outputs byte-identical to one process, a worker killed mid-run, the driver killed and
resumed, a worker that cannot reach the model server, bad --ray values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli.app import app
from judge.llm.cache.store import open_decision_cache
from judge.run.executors.ray_cluster import worker_failure
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder
from tests.ray_helpers import (
    EXAMPLES,
    copies_of_the_example,
    eval_args,
    loopback_ray_env,
    ray_connections_off_loopback,
    same_outputs,
)

loopback_ray_env()  # before ray is imported, which reads it
ray = pytest.importorskip("ray", reason="the [ray] extra is not installed (pip install 'argue-judge[ray]')")
runner = CliRunner()


@pytest.fixture(scope="module")
def local_ray():
    loopback_ray_env()
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def endpoint_module():
    with FakeEndpoint(smart_responder, latency=0.02) as ep:
        yield ep


@pytest.fixture(scope="module")
def collection(tmp_path_factory, endpoint_module):
    """48 reports (the example 8 times over) and their one-process run, the reference every Ray run must equal."""
    root = tmp_path_factory.mktemp("ray")
    reports = copies_of_the_example(root / "data", 8)
    result = runner.invoke(app, eval_args(reports, endpoint_module.api_base, root / "cache-one", root / "one"))
    assert result.exit_code == 0, result.output
    return root, reports


def keys(cache: Path) -> set[str]:
    store = open_decision_cache(cache)
    try:
        return set(store.backend.keys())
    finally:
        store.close()


def test_ray_outputs_are_byte_identical_to_one_process_and_cache_each_answer_once(local_ray, collection,
                                                                                  endpoint_module):
    root, reports = collection
    result = runner.invoke(app, eval_args(reports, endpoint_module.api_base, root / "cache-ray", root / "ray",
                                          "--ray", "local", "--workers", "2"))
    assert result.exit_code == 0, result.output
    assert "on Ray (local)" in result.output
    assert same_outputs(root / "one", root / "ray") == []
    assert keys(root / "cache-ray") == keys(root / "cache-one")  # the driver wrote every answer the run got
    summary = json.loads((root / "ray" / "run-summary.json").read_text())
    decisions = sum(1 for _ in (root / "ray" / "cache-log.jsonl").open())
    assert summary["usage"]["model_calls"] + summary["usage"]["cache_hits"] == decisions
    counted, off = ray_connections_off_loopback()
    assert counted > 0 and off == [], off

    # A rerun on Ray into the same cache: the workers read the driver's cache, so nothing is asked again.
    before = endpoint_module.calls
    result = runner.invoke(app, eval_args(reports, endpoint_module.api_base, root / "cache-ray", root / "ray-rerun",
                                          "--ray", "local", "--workers", "2"))
    assert result.exit_code == 0, result.output
    assert endpoint_module.calls == before
    assert same_outputs(root / "one", root / "ray-rerun") == []


def test_a_worker_killed_mid_run_has_its_reports_judged_again(local_ray, collection, endpoint_module):
    from judge.run.evaluate import JudgingProgress, evaluate
    from judge.run.inputs import Inputs
    from judge.run.outputs import write_outputs
    from judge.run.spec import EvalSpec
    from judge.settings import ModelSettings

    root, reports = collection
    killed: list[str] = []

    def kill_a_worker() -> None:
        if killed:
            return
        for actor in ray.util.list_named_actors(all_namespaces=True):
            if actor["name"].startswith("argue-judge-worker-"):
                ray.kill(ray.get_actor(actor["name"], namespace=actor["namespace"]))
                killed.append(actor["name"])
                return

    config = EvalSpec.of(model=ModelSettings("openai/fake", endpoint_module.api_base, "x"), cache=root / "cache-kill",
                         ray="local", workers=2)
    with Inputs.load([reports], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"], [EXAMPLES / "docs.jsonl"],
                     root / "docstore-kill") as inputs:
        evaluation = evaluate(inputs, config, JudgingProgress(sentence_done=kill_a_worker), out=root / "killed")
        write_outputs(evaluation, root / "killed")
    assert killed
    assert any("died while judging unit" in message for message in evaluation.warnings), evaluation.warnings
    assert same_outputs(root / "one", root / "killed") == []


def test_the_driver_killed_mid_run_resumes_from_its_journal(local_ray, collection, endpoint_module):
    from judge.run.evaluate import JudgingProgress, evaluate
    from judge.run.inputs import Inputs
    from judge.run.outputs import write_outputs
    from judge.run.spec import EvalSpec
    from judge.settings import ModelSettings

    root, reports = collection

    class DriverKilled(Exception):
        pass

    def die() -> None:
        raise DriverKilled

    def run(resume: bool, progress: JudgingProgress):
        config = EvalSpec.of(model=ModelSettings("openai/fake", endpoint_module.api_base, "x"),
                             cache=root / "cache-resume", ray="local", workers=2, resume=resume)
        with Inputs.load([reports], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"], [EXAMPLES / "docs.jsonl"],
                         root / "docstore-resume") as inputs:
            evaluation = evaluate(inputs, config, progress, out=root / "resumed")
            write_outputs(evaluation, root / "resumed")
        return evaluation

    with pytest.raises(DriverKilled):
        run(False, JudgingProgress(sentence_done=die))
    journal = root / "resumed" / ".argue-run" / "judgments.jsonl"
    assert journal.is_file() and journal.read_bytes()  # the reports of the first unit returned
    evaluation = run(True, JudgingProgress())
    assert 0 < evaluation.run["resumed_reports"] < 48
    assert same_outputs(root / "one", root / "resumed") == []


def test_a_worker_that_cannot_reach_the_model_server_is_one_line_naming_its_node(local_ray, tmp_path):
    closed = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there
    result = runner.invoke(app, eval_args(EXAMPLES / "reports", closed, tmp_path / "cache", tmp_path / "out",
                                          "--ray", "local", "--workers", "1"))
    assert result.exit_code == 3, result.output
    assert "the Ray worker on node 127.0.0.1" in result.output
    assert "cannot reach the model server http://127.0.0.1:9/v1" in result.output
    assert "Traceback" not in result.output


def test_a_ray_address_that_is_no_address_is_one_line_before_anything_starts(tmp_path):
    result = runner.invoke(app, eval_args(EXAMPLES / "reports", "http://127.0.0.1:9/v1", tmp_path / "cache",
                                          tmp_path / "out", "--ray", "runs/"))
    assert result.exit_code == 3, result.output
    assert "--ray 'runs/' is not local (a Ray runtime on this machine), auto, ray://HOST:PORT or HOST:PORT" \
        in result.output
    assert not (tmp_path / "out").exists()


def cli(*args: str, init_timeout: float | None = None) -> list[str]:
    """The command line of a fresh `argue-judge` process (this module's runtime would be used as it is), with
    ray.init given `init_timeout` seconds instead of the default when set."""
    patch = f"rc.INIT_TIMEOUT = {init_timeout}; " if init_timeout is not None else ""
    return [sys.executable, "-c", "import sys; import judge.run.executors.ray_cluster as rc; " + patch +
            "from judge.cli.app import main; sys.argv[0] = 'argue-judge'; main()", *args]


@pytest.mark.parametrize("address", ["127.0.0.1:9", "ray://127.0.0.1:9"])
def test_an_unreachable_ray_address_is_one_line_exit_3(tmp_path, address):
    """Nothing listens on the discard port: one line at once, exit 3 (HOST:PORT used to be retried by Ray for
    minutes, deaf to SIGTERM; ray:// used to ask for a reinstall, Ray Client being missing from the extra)."""
    done = subprocess.run(cli(*eval_args(EXAMPLES / "reports", "http://127.0.0.1:9/v1", tmp_path / "cache",
                                         tmp_path / "out", "--ray", address)),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, errors
    assert f"--ray {address}: cannot reach the Ray cluster: nothing answers on 127.0.0.1:9" in errors[0], errors
    assert not (tmp_path / "out" / "judgments.jsonl").exists()


@pytest.fixture
def deaf_listener():
    """A port that accepts connections and never says a word (no Ray there): its address and the count of the
    connections it has accepted."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}", accepted
    finally:
        server.close()
        for connection in accepted:
            connection.close()


def test_a_ray_address_that_never_answers_is_given_up_and_sigterm_ends_the_wait(tmp_path, deaf_listener):
    """Ray retries a cluster address that accepts and never answers for minutes: the run gives it up after
    INIT_TIMEOUT (one line, exit 3), and a SIGTERM meanwhile ends it as one process (exit 143)."""
    import signal
    import time

    address, accepted = deaf_listener
    args = eval_args(EXAMPLES / "reports", "http://127.0.0.1:9/v1", tmp_path / "cache", tmp_path / "out", "--ray",
                     address)
    done = subprocess.run(cli(*args, init_timeout=10), capture_output=True, text=True, timeout=400)
    assert done.returncode == 3, done.stderr
    assert f"--ray {address}: cannot start or reach the Ray cluster: no answer within 10 s" in done.stderr
    assert not (tmp_path / "out" / "judgments.jsonl").exists()

    before = len(accepted)
    driver = subprocess.Popen(cli(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while len(accepted) < before + 2 and driver.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)  # the address answered the reachability check and Ray is connecting
    assert driver.poll() is None, driver.communicate()
    driver.send_signal(signal.SIGTERM)
    _, stderr = driver.communicate(timeout=120)
    assert driver.returncode == 143, stderr
    assert "argue-judge: terminated (SIGTERM)" in stderr


def test_the_ray_extra_installs_what_ray_addresses_need():
    """ray://HOST:PORT (Ray Client) needs grpcio, which plain `ray` does not install: the extra asks for
    ray[client], so what docs/scale.md shows works as installed."""
    import tomllib

    pyproject = tomllib.loads((EXAMPLES.parent / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    assert any(requirement.startswith("ray[client]") for requirement in extras["ray"]), extras["ray"]
    assert "ray://" in (EXAMPLES.parent / "docs" / "scale.md").read_text(encoding="utf-8")
    import grpc  # noqa: F401 -- installed with the extra


def test_more_workers_than_the_cluster_can_hold_is_one_line(local_ray, tmp_path):
    """Each worker is a process: --workers far above the cluster's cores is refused before any starts."""
    result = runner.invoke(app, eval_args(EXAMPLES / "reports", "http://127.0.0.1:9/v1", tmp_path / "cache",
                                          tmp_path / "out", "--ray", "local", "--workers", "9"))
    assert result.exit_code == 3, result.output
    assert "--workers 9: the Ray cluster at local has 2 cores; give at most 8 workers" in result.output
    assert not ray.util.list_named_actors(all_namespaces=True)


def test_a_worker_that_cannot_import_the_package_is_named_by_its_node():
    failure = RuntimeError("The actor died because of an error raised in its creation task, ray::JudgeWorker: "
                           "Traceback (most recent call last): ModuleNotFoundError: No module named 'judge'")
    line = worker_failure(failure, "10.0.0.7 (gpu7)")
    assert line.startswith("the Ray worker on node 10.0.0.7 (gpu7) cannot import argue-judge "
                           "(ModuleNotFoundError: No module named 'judge')")


def served_questions(ep: FakeEndpoint) -> int:
    """The distinct questions the endpoint answered (two workers may each ask one before either has its answer)."""
    return len({json.dumps([r["messages"], r.get("tools"), r.get("tool_choice")], sort_keys=True)
                for r in ep.requests})


@pytest.mark.parametrize("executor", [[], ["--ray", "local", "--workers", "2"]], ids=["one-process", "ray"])
def test_max_cost_keeps_every_paid_answer_and_says_what_the_run_spent(local_ray, collection, tmp_path, executor):
    """A budget a few decisions deep stops the run (exit 4) whichever worker crosses it, and only once the calls
    in flight have ended: every question the server answered is in the cache (it used to hold none of a Ray run's,
    the answers going down with their unfinished units), and the line counts every call the server got."""
    _, reports = collection
    with FakeEndpoint(smart_responder, latency=0.02) as ep:
        result = runner.invoke(app, eval_args(reports, ep.api_base, tmp_path / "cache", tmp_path / "out", *executor,
                                              "--max-cost", "0.1", "--price-per-1k", "0.01"))
        served, questions = ep.calls, served_questions(ep)
    assert result.exit_code == 4, result.output
    assert "budget reached" in result.output
    assert served > 0 and len(keys(tmp_path / "cache")) == questions, (served, questions)
    assert f"spent on {served} model calls" in " ".join(result.output.split()), result.output
    assert not (tmp_path / "out" / "judgments.jsonl").exists()  # no finished run: its outputs were not written


def test_a_dead_workers_calls_are_counted_and_its_death_is_said_under_ray(local_ray, collection, tmp_path):
    """The server kills the only worker while answering its 12th call (one call in flight: --concurrency 1). The
    calls the worker made before are in the run's usage (they used to go with its unfinished units) and every
    answer it got is in the cache; the death is reported as Ray's, not as the embedded judge's."""
    import threading

    from judge.run.evaluate import evaluate
    from judge.run.inputs import Inputs
    from judge.run.spec import EvalSpec
    from judge.settings import ModelSettings

    root, reports = collection
    lock = threading.Lock()
    answered: list[int] = []
    killed: list[str] = []

    def killing(request: dict) -> dict:
        with lock:
            answered.append(1)
            now = len(answered)
        if now == 12:
            for actor in ray.util.list_named_actors(all_namespaces=True):
                if actor["name"].startswith("argue-judge-worker-"):
                    handle = ray.get_actor(actor["name"], namespace=actor["namespace"])
                    ray.kill(handle)
                    killed.append(actor["name"])
                    with pytest.raises(ray.exceptions.RayActorError):
                        ray.get(handle.hello.remote(), timeout=120)  # dead before this answer is sent
        return smart_responder(request)

    with FakeEndpoint(killing, latency=0.02) as ep:
        config = EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x"), cache=tmp_path / "cache",
                             concurrency=1, ray="local", workers=1)
        with Inputs.load([reports], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"], [EXAMPLES / "docs.jsonl"],
                         tmp_path / "docstore") as inputs:
            evaluation = evaluate(inputs, config)
        served, questions = ep.calls, served_questions(ep)
    assert len(killed) == 1
    died = [d for d in evaluation.diagnostics if "died while judging unit" in d.message]
    assert died and {d.source for d in died} == {"ray"}, [(d.source, d.message) for d in evaluation.diagnostics]
    assert served - evaluation.usage.model_calls in (0, 1), (served, evaluation.usage)  # the call in flight
    assert len(keys(tmp_path / "cache")) == questions


@pytest.mark.parametrize(("signal_name", "code", "said"), [("SIGTERM", 143, "terminated (SIGTERM)"),
                                                           ("SIGINT", 130, "interrupted")])
def test_a_signal_to_the_driver_mid_run_is_the_one_line_of_one_process(endpoint_module, tmp_path, signal_name, code,
                                                                       said):
    """SIGTERM (a scheduler, `timeout`) to the driver alone; SIGINT to its whole process group, as Ctrl-C in a
    terminal sends it (Ray's own processes get it too). Ray's handlers used to print a native stack dump and abort
    (exit -6) on SIGTERM; the run ends as one process does: one line, the signal's exit code, the journal kept."""
    import os
    import signal
    import threading
    import time

    from judge.testing import FakeEndpoint

    out = tmp_path / "out"
    journal = out / ".argue-run" / "judgments.jsonl"
    release = threading.Event()

    def holding(request: dict) -> dict:
        # Once a judgment is in the journal, the server answers nothing more until the driver has dealt with the
        # signal: the run cannot end before the signal reaches it. (Without this the test raced: on a busy
        # machine the last answers could come between the test's look at the journal and its signal.)
        if journal.is_file() and journal.stat().st_size:
            release.wait(300)
        return smart_responder(request)

    with FakeEndpoint(holding, latency=0.05) as slow:
        try:
            # SIGINT at its default, as in a terminal: started from a shell without job control (a script,
            # `cmd &`) the test inherits SIGINT ignored, and the driver would rightly ignore it too.
            driver = subprocess.Popen(
                [sys.executable, "-m", "judge.cli.app", *eval_args(EXAMPLES / "reports", slow.api_base,
                                                                   tmp_path / "cache", out, "--ray", "local",
                                                                   "--workers", "1")],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            deadline = time.monotonic() + 300
            while not (journal.is_file() and journal.stat().st_size) and driver.poll() is None \
                    and time.monotonic() < deadline:
                time.sleep(0.2)  # judging is under way: a judgment has come back
            assert driver.poll() is None, driver.communicate()
            sent = getattr(signal, signal_name)
            if sent == signal.SIGINT:
                os.killpg(driver.pid, sent)
            else:
                driver.send_signal(sent)
            _, stderr = driver.communicate(timeout=180)
        finally:
            release.set()
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert driver.returncode == code, stderr
    assert len(lines) == 1 and said in lines[0] and "--resume" in lines[0], lines
    assert journal.is_file() and not (out / "judgments.jsonl").exists()


@pytest.mark.parametrize(("model", "ray_address", "workers", "noted"), [
    ("embedded", "local", 4, True), ("embedded", "local", None, False), ("openai/fake", "local", 4, False)])
def test_workers_with_the_embedded_judge_on_ray_is_said_to_have_no_effect(model, ray_address, workers, noted):
    """The embedded judge runs one worker per node: --workers is recorded among the unapplied settings (printed
    with the run's diagnostics, kept in run-summary.json), not silently dropped."""
    from judge.llm.embedded.weights import EMBEDDED_MODEL
    from judge.run.spec import EvalSpec
    from judge.settings import ModelSettings

    config = EvalSpec.of(model=ModelSettings(EMBEDDED_MODEL if model == "embedded" else model), cache=None,
                         ray=ray_address, workers=workers).resolve()
    said = [note for note in config.unapplied if note.startswith("--workers")]
    assert said == ([f"--workers {workers} has no effect with the embedded judge on Ray: it runs one worker per "
                     "node, with the node's cores as its threads; ignored"] if noted else []), config.unapplied
    assert config.workers == (None if noted else workers)  # ignored as said: it would size llama.cpp's threads


@pytest.mark.parametrize("after", [["--docs", str(EXAMPLES / "docs.jsonl")], ["--requests", "r.jsonl"]])
def test_ray_followed_by_another_option_is_one_line_asking_for_an_address(tmp_path, after):
    """click would take the next option for --ray's value and then say that option is missing."""
    args = ["eval", str(EXAMPLES / "reports"), "--ray", *after, "--out", str(tmp_path / "out")]
    result = runner.invoke(app, args)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert f"--ray: needs an ADDRESS (local, auto, ray://HOST:PORT or HOST:PORT) and got the option '{after[0]}'" \
        in lines[0], lines
    bare = runner.invoke(app, ["eval", str(EXAMPLES / "reports"), "--ray"])  # click's own line, kept
    assert bare.exit_code == 2 and bare.stderr.strip().endswith("Option '--ray' requires an argument."), bare.stderr
