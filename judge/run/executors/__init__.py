"""Who does the judging of `eval`: one process (the default), or the workers of a Ray cluster.

Both sit behind one small interface (`Executor`): given what is to be judged (`Judging`: the reports left to
judge, the settings, the driver's decision cache) they hand each report's judgment, the moment it is complete, to
the run's `deliver` callback, which streams it into `--out` (judge.run.streaming); the run's outputs are the same
bytes whichever executor judged. `executor_for(config)` picks one from the plan's `ray`. The Ray executor
(judge.run.executors.ray_cluster) imports ray only when it is used.
"""

from judge.run.executors.base import Executor, Judged, Judging, add_usage
from judge.run.executors.one_process import OneProcess, judge_by_request, run_bounded
from judge.settings import ModelSettings

__all__ = ["Executor", "Judged", "Judging", "OneProcess", "add_usage", "check_ray_address", "executor_for",
           "judge_by_request", "run_bounded", "unapplied_ray_options"]


def check_ray_address(address: str | None, workers: int | None) -> None:
    """`ray`'s value: local, auto, ray://HOST:PORT or HOST:PORT (a mistyped word is refused, not tried), and
    `workers` only with it. ConfigurationError, before anything starts."""
    from judge.errors import ConfigurationError, SettingError

    if address is None:
        if workers is not None:
            raise SettingError("workers (--workers): only Ray has workers; give ray= too (--ray ADDRESS)")
        return
    if address in ("local", "auto") or "://" in address or address.rpartition(":")[2].isdigit():
        return
    raise ConfigurationError(f"--ray {address!r} is not local (a Ray runtime on this machine), auto, "
                             "ray://HOST:PORT or HOST:PORT")


def unapplied_ray_options(address: str | None, workers: int | None, model: ModelSettings) -> list[str]:
    """One note per Ray option the run cannot apply (recorded with the run's other unapplied settings): a judge
    that runs on the node (the embedded one) has one worker per node, its threads the node's cores
    (ray_cluster.RayExecutor._placements), so `workers` changes nothing."""
    from judge.llm.judges import judge_of

    if address is None or workers is None or not judge_of(model).in_process:
        return []
    return [f"--workers {workers} has no effect with the embedded judge on Ray: it runs one worker per node, "
            "with the node's cores as its threads; ignored"]


def executor_for(ray: str | None, workers: int | None) -> Executor:
    """`ray=None`: this process. Otherwise a Ray executor: "local" (a runtime on this machine, every core), "auto"
    (the cluster this machine belongs to) or "ray://HOST:PORT"; `workers` defaults to the cluster's cores."""
    if ray is None:
        return OneProcess()
    from judge.run.executors.ray_cluster import RayExecutor

    return RayExecutor(ray, workers)
