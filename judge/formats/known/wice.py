"""WiCE items (a Wikipedia claim, the sentences of a cited page, a support label), for calibration; read by
judge.calibration.importers."""

from __future__ import annotations

from typing import Any

from judge.formats.registry import Format, register


def _detect(record: dict[str, Any]) -> bool:
    return "claim" in record and "evidence" in record


FORMAT = register(Format(
    "wice", "calibration items", "WiCE items: {claim, evidence: [sentence], label, supporting_sentences}, one per "
    "line", _detect, what="a WiCE file", use="give it to `argue-judge calibrate --wice`"))
