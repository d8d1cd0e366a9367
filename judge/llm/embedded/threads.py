"""How many llama.cpp threads the embedded judge runs: the CPUs this process may use less the cores other processes
keep busy, read from the kernel's CPU counters (the 1-minute load average lags by a minute)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from judge.errors import ConfigurationError


def cpu_counters(stat: Path = Path("/proc/stat")) -> tuple[int, int, int] | None:
    """The kernel's CPU counters summed over every core (total ticks, idle ticks incl. iowait) and the number of
    cores; None where /proc/stat cannot be read (not Linux)."""
    try:
        lines = stat.read_text(encoding="ascii").splitlines()
        fields = [int(v) for v in lines[0].split()[1:]]
    except (OSError, IndexError, ValueError):
        return None
    cores = sum(1 for line in lines[1:] if line.startswith("cpu"))
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)   # idle + iowait
    return sum(fields), idle, cores


def usable_cpus() -> int:
    """CPUs this process may run on (the affinity mask where the OS has one, else os.cpu_count())."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def choose_threads(requested: int | None = None) -> int:
    """``requested`` when given, else the usable CPUs minus the cores other processes keep busy now, at least 1."""
    if requested is not None:
        if requested < 1:
            raise ConfigurationError(f"--threads must be at least 1, got {requested}")
        return requested
    return threads_for(usable_cpus(), busy_cores())


def threads_for(cpus: int, others_busy: float) -> int:
    """The cores other processes leave free (rounded), at least 1: llama.cpp's threads wait for each other at every
    layer, so a thread on a busy core slows all of them."""
    return max(1, min(cpus, cpus - int(others_busy + 0.5)))


class MachineLoad:
    """How many cores other processes kept busy since the previous reading: the kernel's CPU counters
    (/proc/stat) less this process's own CPU time (the model's threads are busy while it computes). No sleep:
    read between two completions, it measures the time the last one took. None without /proc/stat."""

    def __init__(self, stat: Path = Path("/proc/stat")):
        self.stat = stat
        self._last: tuple[float, float, float] | None = None

    def _sample(self) -> tuple[float, float, float, int] | None:
        counters = cpu_counters(self.stat)
        if counters is None:
            return None
        total, idle, cores = counters
        ticks = os.sysconf("SC_CLK_TCK")
        own = os.times()
        return total / ticks, (total - idle) / ticks, own.user + own.system, max(1, cores)

    def others_busy(self) -> float | None:
        """Cores busy with other processes since the previous call (None on the first call, or unknown)."""
        now, last = self._sample(), self._last
        self._last = now
        if now is None or last is None or now[0] <= last[0]:
            return None
        wall = (now[0] - last[0]) / now[3]                 # seconds the counters cover (they sum every core)
        others = (now[1] - last[1]) - (now[2] - last[2])  # busy CPU-seconds, less ours
        return max(0.0, others / wall)


def busy_cores(stat: Path = Path("/proc/stat"), window: float = 0.25) -> float:
    """How many cores are busy right now: measured from the kernel's CPU counters over `window` seconds.

    The 1-minute load average lags by a minute: right after a test suite or a finished job it reports cores busy
    that are idle by now, and a run started then would keep one thread for its whole life. Without /proc/stat
    (not Linux) it falls back to the load average, and to 0 without that."""
    first = cpu_counters(stat)
    if first is None:
        try:
            return float(os.getloadavg()[0])
        except (AttributeError, OSError):
            return 0.0
    time.sleep(window)
    second = cpu_counters(stat)
    if second is None:
        return 0.0
    total, idle = second[0] - first[0], second[1] - first[1]
    return 0.0 if total <= 0 else second[2] * (total - idle) / total
