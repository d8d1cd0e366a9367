"""argue-judge: ARGUE-style evaluation of cited reports with LLM judges.

    import judge
    evaluation = judge.evaluate("examples/reports", requests="examples/requests.jsonl",
                                docs="examples/docs.jsonl", nuggets="examples/nuggets")
    evaluation.aggregates()["run-cited"]["SentencePrecision"]

The Python API (judge.api, where each call has a runnable example; its `__all__` is the list of names): `evaluate`,
`score`, `calibrate`, `html_view`, `run_baselines`, `baseline`, `merge`, `read_judgments`, `write_judgments`, the
cache calls, the nugget calls (`create_nuggets`, `pool_nuggets`, `accept_candidates`) and the awaitable `*_async`
twins; each works inside a running event loop (Jupyter) and takes paths or objects. They load on first use, so
`import judge` stays light and `judge.__version__` imports no model client.

Data flows one way: inputs (`formats/`) -> judging (`judging/`: the flowchart over an oracle, decisions asked
through `llm/`, text that addresses the judge withheld by `defence/`) -> judgments (the seam: LLM judges and
human assessors write the same records) -> `metrics/` -> outputs (`run/`, `view/`, `calibration/`). Folders are
floors: the top-level modules are the kernel every floor shares (errors, labels, types, settings, diagnostics),
and each package imports only the floors below it (tests/test_architecture.py checks this from the source).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judge._version import __version__

if TYPE_CHECKING:  # for type checkers and IDEs; at run time __getattr__ below loads them
    from judge.api import (  # noqa: F401
        DrawnSample,
        HumanEstimates,
        ScoredJudgments,
        accept_candidates,
        baseline,
        cache_stats,
        calibrate,
        calibrate_async,
        clear_cache,
        create_nuggets,
        create_nuggets_async,
        evaluate,
        evaluate_async,
        export_cache,
        html_view,
        import_cache,
        merge,
        plan_batch,
        pool_nuggets,
        pool_nuggets_async,
        read_judgments,
        run_baselines,
        sample,
        score,
        write_judgments,
    )

# judge.api.__all__, copied so that `import judge` does not load judge.api (tests/test_api.py holds this tuple and
# the TYPE_CHECKING imports above equal to it). Not `view` or `baselines`: those names are the subpackages judge.view
# and judge.baselines, which Python's import system sets on `judge` once they are imported, replacing any function.
_API = ("evaluate", "evaluate_async", "score", "calibrate", "calibrate_async", "html_view", "run_baselines",
        "baseline", "merge", "read_judgments", "write_judgments", "cache_stats", "clear_cache", "export_cache",
        "import_cache", "ScoredJudgments", "HumanEstimates", "create_nuggets", "create_nuggets_async", "pool_nuggets",
        "pool_nuggets_async", "accept_candidates", "sample", "DrawnSample", "plan_batch")
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    # PEP 562: judge.api (and what it imports) loads the first time one of its names is asked for.
    if name in _API:
        from judge import api

        return getattr(api, name)
    raise AttributeError(f"module 'judge' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
