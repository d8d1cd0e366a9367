"""argue-judge: ARGUE-style evaluation of cited reports with LLM judges.

    import judge
    evaluation = judge.evaluate("examples/reports", requests="examples/requests.jsonl",
                                docs="examples/docs.jsonl", nuggets="examples/nuggets")
    evaluation.scores.runs["run-cited"]["SentencePrecision"]

The Python API is `evaluate`, `score`, `calibrate`, `read_judgments` and `write_judgments` (judge.api, where each
has a runnable example). They load on first use, so `import judge` stays light and `judge.__version__` imports no
model client.

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
    from judge.api import ScoredJudgments, calibrate, evaluate, read_judgments, score, write_judgments  # noqa: F401

_API = ("evaluate", "score", "calibrate", "read_judgments", "write_judgments", "ScoredJudgments")
_NUGGETS = ("create_nuggets", "create_nuggets_async", "pool_nuggets", "pool_nuggets_async", "accept_candidates")
__all__ = ["__version__", *_API, *_NUGGETS]


def __getattr__(name: str) -> Any:
    # PEP 562: judge.api (and what it imports) loads the first time one of its names is asked for.
    if name in _API:
        from judge import api

        return getattr(api, name)
    if name in _NUGGETS:
        from judge.nuggets import api as nuggets_api

        return getattr(nuggets_api, name)
    raise AttributeError(f"module 'judge' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API, *_NUGGETS})
