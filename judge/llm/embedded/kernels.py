"""Which llama.cpp CPU kernels the embedded judge loads with: `auto`, `safe` or `fast` (the CLI's ``--kernels``).

llama-cpp-python built from source compiles ggml natively, and on an Intel Xeon with AMX (Sapphire Rapids and
later) that turns on ggml's AMX matrix-multiply path. In llama-cpp-python 0.3.36 that path dies with SIGILL (a
``tilezero`` in a thread that never configured its tile registers): exit 132, no message. The weights reach that
path through llama.cpp's *extra buffer types*, which ggml lists as [AMX (when compiled in), CPU_REPACK] and
llama.cpp uses only when the model parameter ``use_extra_bufts`` is true (its default):

* ``fast`` loads as llama.cpp does by default: extra buffer types on, so weights are repacked for the CPU's
  widest kernels (and put in AMX tiles where AMX is compiled in).
* ``safe`` loads with ``use_extra_bufts = False``: no AMX path, and no weight repacking either (the two sit behind
  the one switch; keeping repacking alone would need a per-tensor buffer override with the CPU_REPACK type, which
  llama-cpp-python's bindings do not reach).
* ``auto`` is ``safe`` on a CPU that reports AMX (``amx_tile`` or ``amx_int8`` in /proc/cpuinfo) and ``fast``
  elsewhere.

Kernel paths round differently, so a verdict can differ between them; the decision cache does not key the
choice (a rerun replays the answers whichever path made them), the run summary records it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from judge.errors import ConfigurationError
from judge.settings import KERNEL_CHOICES as KERNELS
from judge.settings import Kernels

CPUINFO = Path("/proc/cpuinfo")
AMX_FLAGS = ("amx_tile", "amx_int8")


def amx_flags(cpuinfo: Path = CPUINFO) -> list[str]:
    """The AMX flags the CPU reports (the first ``flags`` line of `cpuinfo`); [] without the file (not Linux)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags":
            present = set(value.split())
            return [flag for flag in AMX_FLAGS if flag in present]
    return []


@dataclass(frozen=True)
class KernelChoice:
    """What was asked for, what the model loads with, and why (recorded in run-summary.json as ``kernels``)."""

    requested: Kernels
    resolved: Literal["safe", "fast"]
    reason: str
    amx_detected: bool
    fell_back_to: Literal["safe"] | None = None  # set when a worker killed by SIGILL was restarted with `safe`

    @property
    def active(self) -> Literal["safe", "fast"]:
        """The kernels the model loads with now."""
        return self.fell_back_to or self.resolved

    def model_params(self) -> dict[str, Any]:
        """llama.cpp model parameters (fields of ``llama_model_params``) that differ from its defaults."""
        return {"use_extra_bufts": False} if self.active == "safe" else {}

    def after_sigill(self) -> KernelChoice:
        return replace(self, fell_back_to="safe", reason="worker killed by SIGILL")

    def as_dict(self) -> dict[str, Any]:
        record = asdict(self)
        if self.fell_back_to is None:
            del record["fell_back_to"]
        return record


def resolve_kernels(requested: str = "auto", cpuinfo: Path = CPUINFO) -> KernelChoice:
    """`requested` (auto|safe|fast) resolved for the CPU `cpuinfo` describes."""
    if requested not in KERNELS:
        raise ConfigurationError(f"--kernels must be one of {', '.join(KERNELS)}, got {requested!r}")
    flags = amx_flags(cpuinfo)
    amx = bool(flags)
    if requested == "safe":
        return KernelChoice("safe", "safe", "asked for", amx)
    if requested == "fast":
        return KernelChoice("fast", "fast", "asked for", amx)
    if amx:
        return KernelChoice("auto", "safe", f"the CPU reports AMX ({', '.join(flags)}): llama.cpp's AMX kernels "
                            "die with SIGILL in llama-cpp-python 0.3.36", amx)
    return KernelChoice("auto", "fast", "no AMX on this CPU", amx)


def cpu_name(cpuinfo: Path = CPUINFO) -> str:
    """The CPU's model name as /proc/cpuinfo gives it (`AMD EPYC`, `Intel(R) Xeon(R) Platinum 8481C`), or the
    platform's word for it where there is no such file."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or "an unknown CPU"


def kernels_line(requested: str = "auto", cpuinfo: Path = CPUINFO) -> str:
    """The line eval prints for the embedded judge: which kernel path on which CPU (verdicts can differ between
    kernel paths by rounding, so a printed result says where it came from)."""
    choice = resolve_kernels(requested, cpuinfo)
    return f"embedded judge: {choice.resolved} kernels on {cpu_name(cpuinfo)} ({choice.requested}: {choice.reason})"
