"""What of the model settings a run can apply: the judge decides (judge.llm.judges), this is the name the run
imports."""

from __future__ import annotations

from judge.llm.judges import applied_settings

__all__ = ["applied_settings"]
