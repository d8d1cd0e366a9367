"""AttributionBench items (a claim, its references, a human attribution label), for calibration; read by
judge.calibration.importers."""

from __future__ import annotations

from typing import Any

from judge.formats.registry import Format, register


def _detect(record: dict[str, Any]) -> bool:
    return "attribution_label" in record


FORMAT = register(Format(
    "attributionbench", "calibration items", "AttributionBench items: {claim, references, attribution_label}, one "
    "per line", _detect, what="an AttributionBench file", use="give it to `argue-judge calibrate --attributionbench`"))
