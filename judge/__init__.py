"""argue-judge: ARGUE-style evaluation of cited reports with LLM judges.

Data flows one way: inputs (`formats/`) -> judging (`judging/`: the flowchart over an oracle, decisions asked
through `llm/`, text that addresses the judge withheld by `defence/`) -> judgments (the seam: LLM judges and
human assessors write the same records) -> `metrics/` -> outputs (`run/`, `view/`, `calibrate/`). Folders are
floors: the top-level modules are the kernel every floor shares (errors, labels, types, settings, diagnostics),
and each package imports only the floors below it (tests/test_architecture.py checks this from the source).
"""

from judge._version import __version__

__all__ = ["__version__"]
