"""Auto-ARGUE's judgments file: one record per report with its per-sentence judgments; read (with the nugget banks)
by judge.adapters.autoargue, for `argue-judge score` and `import auto-argue`."""

from __future__ import annotations

from typing import Any

from judge.formats.registry import Format, register


def _detect(record: dict[str, Any]) -> bool:
    return "report" in record and "judgments" in record


FORMAT = register(Format(
    "auto-argue-judgments", "judgments", "Auto-ARGUE judgments: {report, judgments}, one report per line; scored "
    "with its nugget banks", _detect, what="an Auto-ARGUE judgments file",
    use="convert it with `argue-judge import auto-argue FILE --nuggets BANKS` (or give it to `argue-judge score` "
    "with --nuggets)", rank=10))
