"""The embedded judge in a worker process: kernel choice from the CPU flags, completions across the process
boundary (log-probabilities, reused prompt tokens, context overflow), and deaths by signal, with a fake model the
worker builds by module path (judge.testing.fake_llama) and that kills its process at the Nth completion."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judge.errors import ConfigurationError
from judge.llm.embedded.kernels import KernelChoice, amx_flags, resolve_kernels
from judge.llm.embedded.worker_runtime import WorkerDied, WorkerRuntime

FAKE = "judge.testing.fake_llama:build"
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SCHEMA = {"title": "NeedsCitation", "type": "object",
          "properties": {"needs_citation": {"type": "boolean"}}, "required": ["needs_citation"]}

SAPPHIRE_RAPIDS = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8481C
flags\t\t: fpu vme sse sse2 avx avx2 avx512f avx512_vnni amx_bf16 avx512_fp16 amx_tile amx_int8 arch_lbr
"""
EPYC = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
flags\t\t: fpu vme sse sse2 avx avx2 fma bmi2
"""


def cpuinfo(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(text, encoding="utf-8")
    return path


# -------------------------------------------------------------------------------------------- kernels


def test_auto_chooses_the_safe_kernels_on_a_cpu_with_amx(tmp_path):
    info = cpuinfo(tmp_path, SAPPHIRE_RAPIDS)
    assert amx_flags(info) == ["amx_tile", "amx_int8"]
    choice = resolve_kernels("auto", info)
    assert (choice.resolved, choice.amx_detected) == ("safe", True)
    assert choice.model_params() == {"use_extra_bufts": False}
    assert "AMX (amx_tile, amx_int8)" in choice.reason


def test_auto_keeps_the_fast_kernels_without_amx(tmp_path):
    choice = resolve_kernels("auto", cpuinfo(tmp_path, EPYC))
    assert (choice.resolved, choice.amx_detected, choice.reason) == ("fast", False, "no AMX on this CPU")
    assert choice.model_params() == {}  # llama.cpp's defaults: extra buffer types (weight repacking) on
    assert resolve_kernels("auto", tmp_path / "absent").resolved == "fast"  # no /proc/cpuinfo: not Linux


def test_forced_kernels_win_over_the_cpu_and_are_recorded(tmp_path):
    amx = cpuinfo(tmp_path, SAPPHIRE_RAPIDS)
    assert resolve_kernels("fast", amx).as_dict() == {"requested": "fast", "resolved": "fast",
                                                      "reason": "asked for", "amx_detected": True}
    assert resolve_kernels("safe", cpuinfo(tmp_path, EPYC)).model_params() == {"use_extra_bufts": False}
    with pytest.raises(ConfigurationError, match="--kernels must be one of auto, safe, fast"):
        resolve_kernels("fastest", amx)


def test_a_sigill_fallback_is_recorded_beside_the_first_choice():
    choice = KernelChoice("auto", "fast", "no AMX on this CPU", False).after_sigill()
    assert choice.active == "safe" and choice.model_params() == {"use_extra_bufts": False}
    assert choice.as_dict() == {"requested": "auto", "resolved": "fast", "fell_back_to": "safe",
                                "reason": "worker killed by SIGILL", "amx_detected": False}


def test_the_real_model_loads_with_the_kernels_model_params(monkeypatch):
    """safe reaches llama.cpp as use_extra_bufts = False, through Llama's own model params (no real model)."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from judge.llm.embedded.runtime import _runtime_llama_class

    seen = {}

    class Loaded(Exception):
        pass

    def fake_model(*, path_model, params, verbose):
        seen["use_extra_bufts"] = params.use_extra_bufts
        raise Loaded

    monkeypatch.setattr(llama_cpp.llama.internals, "LlamaModel", fake_model)
    monkeypatch.setattr(os.path, "exists", lambda _path: True)
    for overrides, expected in (({"use_extra_bufts": False}, False), ({}, True)):
        with pytest.raises(Loaded):
            _runtime_llama_class()(model_path="model.gguf", verbose=False, model_param_overrides=overrides)
        assert seen["use_extra_bufts"] is expected


# ------------------------------------------------------------------------------------------ the worker


def runtime(tmp_path: Path, kernels: str = "safe", **options) -> WorkerRuntime:
    return WorkerRuntime(n_threads=1, kernels=kernels, cpuinfo=cpuinfo(tmp_path, EPYC), factory=FAKE,
                         factory_options={"record": str(tmp_path / "record"), **options})


def ask(worker: WorkerRuntime, document: str = "the plant recycles batteries", top_logprobs: int | None = 2):
    return worker.complete(top_logprobs=top_logprobs, response_format={"type": "json_object", "schema": SCHEMA},
                           messages=[{"role": "system", "content": "rules " * 40},
                                     {"role": "user", "content": f"{document} <sentence>It works.</sentence>"}])


def records(tmp_path: Path) -> list[str]:
    return (tmp_path / "record").read_text(encoding="utf-8").splitlines()


def test_completions_cross_the_process_boundary_with_logprobs_and_reused_tokens(tmp_path):
    worker = runtime(tmp_path)
    try:
        first, second = ask(worker), ask(worker)
        assert worker.alive and records(tmp_path) == ["load safe", "answer 1", "answer 2"]  # one worker, reused
        text = first.result["choices"][0]["message"]["content"]
        assert json.loads(text) == {"rationale": "Facts need sources.", "needs_citation": False}
        assert b"".join(first.token_bytes(c.token) for c in first.choices) == text.encode()
        assert first.choices[0].alternatives == ((ord("{"), first.choices[0].logprob),)
        assert first.reused_tokens == 0 and second.reused_tokens == second.prompt_tokens - 1  # the same prompt
        assert ask(worker, top_logprobs=None).choices is None
    finally:
        worker.close()
    assert not worker.alive and not list(Path(worker.cpuinfo).parent.glob("argue-local-worker-*"))


def test_context_overflow_reaches_the_provider_as_its_own_error(tmp_path):
    """llama-cpp-python reports an overflow as a ValueError; it must arrive as one (the provider names sizes)."""
    import litellm

    from judge.llm.embedded import provider as lp
    from judge.llm.embedded.weights import EMBEDDED_MODEL

    worker = runtime(tmp_path)
    previous = lp.use_runtime(worker)
    try:
        lp.register_embedded_provider(prepare=False)
        words = "word " * 9000
        with pytest.raises(lp.EmbeddedContextOverflow) as info:  # the fake's own prompt check is llama.cpp's
            litellm.completion(model=EMBEDDED_MODEL, messages=[{"role": "user", "content": words}],
                               response_format={"type": "json_schema",
                                                "json_schema": {"name": "NeedsCitation", "schema": SCHEMA}})
        assert (info.value.prompt_tokens, info.value.n_ctx) == (9000, 8192)
        assert worker.alive  # an error reply, not a death
    finally:
        lp.use_runtime(previous)
        worker.close()


@pytest.mark.parametrize(("signal_name", "advice"), [
    ("SIGILL", "the CPU rejected an instruction of llama.cpp's optimised kernels, even with the safe kernels"),
    ("SIGSEGV", "llama.cpp crashed (a segmentation fault"),
    ("SIGKILL", "most likely the kernel's out-of-memory killer"),
])
def test_a_worker_killed_by_a_signal_fails_that_completion_and_every_later_one(tmp_path, signal_name, advice):
    worker = runtime(tmp_path, "safe", die_at=3, die_with=signal_name)
    try:
        ask(worker), ask(worker)
        with pytest.raises(WorkerDied) as info:
            ask(worker)
        message = str(info.value)
        assert f"worker was killed by {signal_name}" in message and advice in message, message
        assert info.value.signal_name == signal_name
        assert not worker.alive
        started = time.perf_counter()
        with pytest.raises(WorkerDied, match=signal_name):  # no new worker per decision: it stays down
            ask(worker)
        assert time.perf_counter() - started < 1.0
        assert records(tmp_path) == ["load safe", "answer 1", "answer 2"]
        assert worker.events == [message]
    finally:
        worker.close()


def test_sigill_of_the_fast_kernels_restarts_the_worker_once_with_the_safe_ones(tmp_path):
    worker = runtime(tmp_path, "auto", die_at=2, die_with="SIGILL", only_with="fast")
    try:
        ask(worker)
        with pytest.raises(WorkerDied, match="restarted with the safe kernels"):
            ask(worker)
        ask(worker), ask(worker)  # the safe worker answers from now on (its fake would die at its 2nd call)
        assert records(tmp_path) == ["load fast", "answer 1", "load safe", "answer 1", "answer 2"]
        assert worker.kernels.as_dict() == {"requested": "auto", "resolved": "fast", "fell_back_to": "safe",
                                            "reason": "worker killed by SIGILL", "amx_detected": False}
        assert len(worker.events) == 1
    finally:
        worker.close()


def test_a_worker_that_cannot_start_shows_its_output_only_then(tmp_path, caplog):
    """The worker's stderr stays in its log file; when it dies, its last lines are logged (the console shows them)."""
    worker = WorkerRuntime(n_threads=1, kernels="safe", factory="judge.testing.no_such_module:build")
    try:
        with pytest.raises(WorkerDied, match=r"worker exited with code 1: rerun"):
            ask(worker)
        assert "ModuleNotFoundError: No module named 'judge.testing.no_such_module'" in caplog.text
    finally:
        worker.close()


def test_ctrl_c_interrupts_the_run_not_the_worker(tmp_path):
    """Ctrl-C reaches the whole process group; the run handles it (and stops the worker), the worker ignores it."""
    worker = runtime(tmp_path)
    try:
        ask(worker)
        os.kill(worker._process.pid, signal.SIGINT)
        ask(worker)
        assert records(tmp_path) == ["load safe", "answer 1", "answer 2"]
    finally:
        worker.close()


@pytest.mark.parametrize("busy", [False, True], ids=["idle", "busy"])
def test_the_worker_leaves_when_its_parent_dies_without_closing_it(tmp_path, busy):
    """A parent killed outright (os._exit: no atexit, no close) leaves no orphan, whether the worker is waiting for
    a request (its socket closes) or in the middle of a long completion (it watches its parent)."""
    script = f"""
import os, sys
sys.path.insert(0, {str(ROOT)!r})
from judge.llm.embedded.worker_runtime import WorkerRuntime
worker = WorkerRuntime(n_threads=1, kernels="safe", factory={FAKE!r}, factory_options={{"hang_at": 2}})
request = dict(messages=[{{"role": "user", "content": "hello"}}],
               response_format={{"type": "json_object", "schema": {SCHEMA!r}}})
worker.complete(**request)
if {busy!r}:
    worker._conn.send({{"op": "complete", "top_logprobs": None, "kwargs": request}})  # the fake hangs on it
print(worker._process.pid, flush=True)
os._exit(0)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    child = int(done.stdout.split()[-1])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and _running(child):
        time.sleep(0.1)
    assert not _running(child), f"worker {child} outlived its parent"


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its (dead) parent could reap it


# ------------------------------------------------------------------------------ argue-judge eval, end to end


@pytest.fixture
def fake_worker(monkeypatch, tmp_path):
    """install(**options) routes argue-local calls to a WorkerRuntime over the fake model; put back after."""
    from judge.llm.embedded import provider as lp

    installed: list[WorkerRuntime] = []
    previous = lp.embedded_runtime()
    monkeypatch.setattr(lp._HANDLER, "prepared", True)  # no weights needed: the fake answers

    def install(kernels: str = "auto", **options) -> WorkerRuntime:
        worker = WorkerRuntime(n_threads=1, kernels=kernels, cpuinfo=cpuinfo(tmp_path, EPYC), factory=FAKE,
                               factory_options={"record": str(tmp_path / "record"), **options})
        installed.append(worker)
        lp.use_runtime(worker)
        return worker

    yield install
    lp.use_runtime(previous)
    for worker in installed:
        worker.close()


def eval_cli(cache: Path, out: Path, *extra: str):
    from typer.testing import CliRunner

    from judge.cli.app import app

    return CliRunner().invoke(app, ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
                                    "--nuggets", str(EXAMPLES / "nuggets"), "--docs", str(EXAMPLES / "docs.jsonl"),
                                    "--cache", str(cache), "--out", str(out), "--threads", "1", *extra])


def summary(out: Path) -> dict:
    return json.loads((out / "run-summary.json").read_text(encoding="utf-8"))


def test_eval_survives_a_worker_killed_by_sigkill_and_a_rerun_resumes_from_the_cache(tmp_path, fake_worker):
    fake_worker(die_at=6, die_with="SIGKILL")
    first = eval_cli(tmp_path / "cache", tmp_path / "out")
    assert first.exit_code == 5, first.output  # the run failed (every later decision failed), outputs written
    assert "no decision succeeded" not in first.output and "killed by SIGKILL" in first.output, first.output
    assert "out-of-memory killer" in first.output
    judged = summary(tmp_path / "out")
    decisions = judged["usage"]["model_calls"] + judged["usage"]["cache_hits"]
    assert judged["usage"]["failures"] == decisions - 5  # the five answered before the crash succeeded
    assert judged["run"]["kernels"]["resolved"] == "fast"
    assert any("killed by SIGKILL" in d["message"] for d in judged["diagnostics"]), judged["diagnostics"]

    fake_worker()  # a healthy worker: the rerun asks only what failed
    second = eval_cli(tmp_path / "cache", tmp_path / "out2")
    assert second.exit_code == 0, second.output
    rerun = summary(tmp_path / "out2")["usage"]
    # (more decisions than the first run: a failed decision ended its sentence's walk through the flowchart)
    assert rerun["failures"] == 0 and rerun["cache_hits"] >= 5  # the five answered before the crash were kept
    answered = [line for line in records(tmp_path) if line.startswith("answer")]
    assert len(answered) == 5 + rerun["model_calls"]  # the second worker was asked only what the cache lacked


def test_eval_restarts_a_sigill_worker_with_safe_kernels_and_says_so(tmp_path, fake_worker):
    fake_worker(die_at=4, die_with="SIGILL", only_with="fast")
    result = eval_cli(tmp_path / "cache", tmp_path / "out", "--kernels", "fast", "--max-failed-fraction", "1")
    assert result.exit_code == 0, result.output
    assert "restarted with the safe kernels" in result.output, result.output
    judged = summary(tmp_path / "out")
    assert judged["run"]["kernels"] == {"requested": "fast", "resolved": "fast", "fell_back_to": "safe",
                                        "reason": "worker killed by SIGILL", "amx_detected": False}
    assert judged["usage"]["failures"] == 1  # the decision in flight; every later one was answered
    assert records(tmp_path).count("load safe") == 1


@pytest.mark.parametrize("signal_name", ["SIGILL", "SIGSEGV"])
def test_eval_names_the_signal_and_what_to_do(tmp_path, fake_worker, signal_name):
    fake_worker("safe", die_at=1, die_with=signal_name)
    result = eval_cli(tmp_path / "cache", tmp_path / "out", "--kernels", "safe")
    assert result.exit_code == 5, result.output
    assert f"killed by {signal_name}" in result.output, result.output
    assert summary(tmp_path / "out")["run"]["kernels"]["resolved"] == "safe"


def test_hosted_models_record_no_kernels(tmp_path, endpoint):
    from typer.testing import CliRunner

    from judge.cli.app import app

    result = CliRunner().invoke(app, [
        "eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
        "--nuggets", str(EXAMPLES / "nuggets"), "--docs", str(EXAMPLES / "docs.jsonl"), "--model", "openai/fake",
        "--api-base", endpoint.api_base, "--api-key", "x", "--cache", str(tmp_path / "c"), "--out",
        str(tmp_path / "out"), "--kernels", "safe"])
    assert result.exit_code == 0, result.output
    assert "kernels" not in summary(tmp_path / "out")["run"]


def test_kernels_option_refuses_an_unknown_path(tmp_path):
    result = eval_cli(tmp_path / "cache", tmp_path / "out", "--kernels", "turbo")
    assert result.exit_code == 2 and "choose one of auto, safe, fast" in result.output, result.output


def test_eval_states_the_kernel_path_and_the_cpu(tmp_path):
    from judge.llm.embedded.kernels import kernels_line

    amx = kernels_line("auto", cpuinfo(tmp_path, SAPPHIRE_RAPIDS))
    assert amx.startswith("embedded judge: safe kernels on Intel(R) Xeon(R) Platinum 8481C (auto: the CPU reports AMX")
    assert kernels_line("auto", cpuinfo(tmp_path, EPYC)) == \
        "embedded judge: fast kernels on AMD EPYC 7B13 (auto: no AMX on this CPU)"
