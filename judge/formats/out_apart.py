"""An output folder apart from the inputs: outputs written among the inputs are read as inputs by the next run.
The rule is judge.formats.paths.check_apart, the one every output path is checked by; this is eval's door to it."""

from __future__ import annotations

from judge.formats.paths import check_out_apart

__all__ = ["check_out_apart"]
