"""The embedded model in a worker process, seen from the run: start it, ask it, notice and explain its death.

:class:`WorkerRuntime` has the interface of :class:`judge.llm.embedded.runtime.LlamaRuntime` that the litellm
provider uses (``complete``, ``set_threads``, ``n_ctx``, ``close``), but the model lives in one child process
(:mod:`judge.llm.embedded.worker`), started on the first completion and reused for the whole run. A native crash
there (SIGILL, SIGSEGV, the OOM killer's SIGKILL) ends the child, not the run: the completion in flight raises
:class:`WorkerDied`, whose message names the signal and what to do, and the decision client records that
decision as failed (the decisions already judged are in the cache). A worker killed by SIGILL while it used the
fast kernels is started again once, with the safe kernels (:mod:`judge.llm.embedded.kernels`), for the rest of the run;
any other death leaves the worker down, and every later completion fails at once with the same message instead
of starting (and losing) a new worker per decision.

The worker's output goes to a log file; it is shown (its last lines, as a logged warning) only when the worker
dies, and kept then; a clean :meth:`close` deletes it (at the latest when the interpreter exits). The worker leaves
when its socket closes, so it does not outlive the run even when the run is killed outright.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from judge.errors import ConfigurationError
from judge.llm.embedded.kernels import CPUINFO, KernelChoice, resolve_kernels
from judge.llm.embedded.runtime import N_CTX, STATE_SLOTS, Completion
from judge.llm.embedded.worker import completion_from_message

log = logging.getLogger(__name__)

LOG_TAIL_LINES = 12
STOP_SECONDS = 5.0  # a worker asked to stop that has not left by then is terminated

# What a signal that ended the worker most likely means, and what the user can do about it.
SIGNAL_ADVICE = {
    "SIGILL": "the CPU rejected an instruction of llama.cpp's optimised kernels",
    "SIGSEGV": "llama.cpp crashed (a segmentation fault in its native code); rerun to go on (decisions judged "
               "so far are in the cache) and, if it happens again, report it with the worker log",
    "SIGBUS": "llama.cpp crashed (a bus error: the model file may have changed or the disk is failing); rerun to go "
              "on (decisions judged so far are in the cache)",
    "SIGKILL": "most likely the kernel's out-of-memory killer: the embedded judge needs about 1.5 GB of free "
               "memory; free some (close other programs, or lower --threads) and rerun (decisions judged so far "
               "are in the cache)",
}


class WorkerDied(RuntimeError):
    """The embedded model's worker process ended while (or before) answering: the completion is lost."""

    def __init__(self, message: str, signal_name: str | None):
        super().__init__(message)
        self.signal_name = signal_name


@dataclass(frozen=True)
class Death:
    """How the worker ended: by a signal (its name) or with an exit code."""

    signal_name: str | None
    exit_code: int | None

    @classmethod
    def of(cls, exit_code: int | None) -> Death:
        if exit_code is not None and exit_code < 0:
            try:
                return cls(signal.Signals(-exit_code).name, exit_code)
            except ValueError:
                return cls(f"signal {-exit_code}", exit_code)
        return cls(None, exit_code)

    def describe(self) -> str:
        if self.signal_name is not None:
            return f"was killed by {self.signal_name}"
        return "is gone" if self.exit_code is None else f"exited with code {self.exit_code}"


class WorkerRuntime:
    """The embedded model in one worker process, started on first use, reused until :meth:`close`.

    ``kernels`` is the CLI's ``--kernels`` (auto|safe|fast), resolved for the CPU ``cpuinfo`` describes when the
    worker first starts. ``factory`` (``"module:function"``, called in the child as ``function(runtime,
    **factory_options)``) builds the model object instead of llama.cpp: tests pass a fake importable in the child.
    """

    def __init__(self, *, n_ctx: int = N_CTX, n_threads: int | None = None, kernels: str = "auto",
                 model_path: Path | str | None = None, state_slots: int = STATE_SLOTS, cpuinfo: Path = CPUINFO,
                 factory: str | None = None, factory_options: dict[str, Any] | None = None):
        self.n_ctx = n_ctx
        self.requested_threads = n_threads
        self.n_threads: int | None = None  # as the worker chose it, once it has loaded the model
        self.model_path = model_path
        self.state_slots = state_slots
        self.cpuinfo = cpuinfo
        self.factory = factory
        self.factory_options = dict(factory_options or {})
        self._requested_kernels = kernels
        self._kernels: KernelChoice | None = None
        self._process: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self._log: Path | None = None
        self._down: WorkerDied | None = None  # set when the worker died for good: later completions fail at once
        self._lock = threading.RLock()
        self._stops_at_exit = False
        self.events: list[str] = []  # what happened to the worker, for the run's diagnostics

    # ------------------------------------------------------------------------------------ settings

    @property
    def kernels(self) -> KernelChoice:
        """The kernel choice (resolved now if the worker has not started yet)."""
        with self._lock:
            if self._kernels is None:
                self._kernels = resolve_kernels(self._requested_kernels, self.cpuinfo)
            return self._kernels

    def set_kernels(self, kernels: str) -> None:
        """Use `kernels` (auto|safe|fast) from the next worker start on; a running worker with other kernels stops."""
        with self._lock:
            if kernels == self._requested_kernels and self._kernels is not None:
                return  # asked again (another client in this process): keep a fallback that happened
            choice = resolve_kernels(kernels, self.cpuinfo)
            if self._kernels is not None and choice.active != self._kernels.active:
                self._stop()
            self._requested_kernels, self._kernels = kernels, choice

    def set_threads(self, n_threads: int | None) -> None:
        """Use ``n_threads`` (None: choose from the free cores) from the next completion on."""
        with self._lock:
            self.requested_threads = n_threads
            if self._process is not None and self._down is None:
                self.n_threads = self._ask({"op": "threads", "threads": n_threads})

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    # ----------------------------------------------------------------------------------- completions

    def complete(self, top_logprobs: int | None = None, **kwargs: Any) -> Completion:
        """``LlamaRuntime.complete`` in the worker; raises WorkerDied when the worker dies (or is down)."""
        with self._lock:
            message = self._ask({"op": "complete", "top_logprobs": top_logprobs, "kwargs": kwargs})
            threads = message.get("threads")
            if threads is not None and threads != self.n_threads:  # the worker follows the machine's load
                if self.n_threads is not None:
                    self.events.append(f"llama.cpp threads {self.n_threads} -> {threads}: other processes' load "
                                       "on the cores changed")
                self.n_threads = threads
            return completion_from_message(message)

    def _ask(self, request: dict[str, Any]) -> Any:
        if self._down is not None:
            raise self._down
        try:
            if self._process is None:
                self._start()
            assert self._conn is not None
            self._conn.send(request)
            reply = self._conn.recv()
        except (EOFError, OSError):  # the socket broke: the worker is gone
            raise self._died() from None
        return raise_reply(reply)

    def _start(self) -> None:
        parent_end, child_end = socket.socketpair()
        fd, log_path = tempfile.mkstemp(prefix="argue-local-worker-", suffix=".log")
        package_root = str(Path(__file__).resolve().parents[3])  # this checkout's judge, not another installed one
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root,
                                                                          os.environ.get("PYTHONPATH")]))}
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "judge.llm.embedded.worker", str(child_end.fileno())],
                pass_fds=(child_end.fileno(),), stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, env=env)
        finally:
            os.close(fd)
            child_end.close()  # only the worker holds it now: when the worker dies, recv() here ends with EOF
        conn = Connection(parent_end.detach())
        self._process, self._conn, self._log = process, conn, Path(log_path)
        if not self._stops_at_exit:
            atexit.register(self.close)
            self._stops_at_exit = True
        conn.send({"model_path": str(self.model_path) if self.model_path else None, "n_ctx": self.n_ctx,
                   "threads": self.requested_threads, "state_slots": self.state_slots,
                   "kernels": self.kernels.as_dict(), "factory": self.factory, "factory_options": self.factory_options})

    def _died(self) -> WorkerDied:
        """Reap the dead worker and explain its death; restart once with safe kernels after a fast path's SIGILL."""
        process = self._process
        assert process is not None
        death = Death.of(_wait(process))
        tail = self._log_tail()
        self._forget_process(keep_log=True)
        choice = self.kernels
        if death.signal_name == "SIGILL" and choice.active == "fast":
            self._kernels = choice.after_sigill()
            message = (f"the embedded judge's worker {death.describe()}: {SIGNAL_ADVICE['SIGILL']}; it was "
                       "restarted with the safe kernels (--kernels safe) for the rest of the run; this decision "
                       "failed, a rerun asks it again (the others are in the cache)")
            error = WorkerDied(message, death.signal_name)  # not down: the next completion starts a safe worker
        else:
            error = WorkerDied(f"the embedded judge's worker {death.describe()}: {self._advice(death, choice)}"
                               f" (worker log: {self._log_path_text()})", death.signal_name)
            self._down = error
        self.events.append(error.args[0])
        log.warning("%s%s", error.args[0], f"\nlast lines of the worker's output:\n{tail}" if tail else "")
        return error

    @staticmethod
    def _advice(death: Death, choice: KernelChoice) -> str:
        if death.signal_name == "SIGILL":
            if choice.active == "fast":  # not reached: a fast worker's SIGILL restarts with safe kernels
                return f"{SIGNAL_ADVICE['SIGILL']}; rerun with --kernels safe"
            return (f"{SIGNAL_ADVICE['SIGILL']}, even with the safe kernels: llama-cpp-python was built for another "
                    "CPU; reinstall it on this machine (pip install --force-reinstall --no-cache-dir "
                    "llama-cpp-python) and rerun")
        if death.signal_name in SIGNAL_ADVICE:
            return SIGNAL_ADVICE[death.signal_name]
        return "rerun to go on (decisions judged so far are in the cache); the worker log says more"

    # -------------------------------------------------------------------------------------- shutdown

    def close(self) -> None:
        """Stop the worker (it frees the model) and delete its log; the next completion starts a new one."""
        with self._lock:
            self._stop()
            self._down = None

    def _stop(self) -> None:
        process = self._process
        if process is None:
            return
        try:
            if self._conn is not None:
                self._conn.send({"op": "stop"})
        except OSError:
            pass  # already gone
        code = _wait(process)
        if code is None:
            process.terminate()
            code = _wait(process)
        self._forget_process(keep_log=code not in (0, None, -signal.SIGTERM))

    def _forget_process(self, keep_log: bool) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._log is not None and not keep_log:
            self._log.unlink(missing_ok=True)
        self._process, self._conn = None, None
        if not keep_log:
            self._log = None

    def _log_tail(self) -> str:
        if self._log is None:
            return ""
        try:
            lines = self._log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-LOG_TAIL_LINES:])

    def _log_path_text(self) -> str:
        return str(self._log) if self._log is not None else "none"


def _wait(process: subprocess.Popen) -> int | None:
    """The worker's exit code once it has ended (negative: the signal that ended it), None if it is still running
    after STOP_SECONDS."""
    try:
        return process.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        return None


# Exceptions the worker may send back that keep their meaning in the parent; any other arrives as RuntimeError.
_REPLY_ERRORS: dict[str, type[Exception]] = {"ValueError": ValueError, "ConfigurationError": ConfigurationError}


def raise_reply(reply: dict[str, Any]) -> Any:
    """A worker reply's value, or its exception raised here: a ValueError stays one (llama-cpp-python reports a
    context overflow so, and the provider turns it into EmbeddedContextOverflow), a ConfigurationError stays one
    (missing weights stop the run)."""
    if "ok" in reply:
        return reply["ok"]
    kind = _REPLY_ERRORS.get(reply["error"])
    if kind is not None:
        raise kind(reply["message"])
    raise RuntimeError(f"{reply['error']} in the embedded judge's worker: {reply['message']}")
