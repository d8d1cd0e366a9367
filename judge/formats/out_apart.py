"""An output folder apart from the inputs: outputs written among the inputs are read as inputs by the next run."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from judge.errors import InputError
from judge.formats._jsonl import is_literal


def check_out_apart(out: Path, inputs: Iterable[str | Path]) -> None:
    """Refuse an output folder that is, or is inside, an input folder: the run's judgments.jsonl and
    cache-log.jsonl would land among the reports (or banks, or documents) and be read as such by the next run."""
    target = Path(out).resolve()
    for source in inputs:
        folder = Path(source) if not is_literal(source) else None
        if folder is None or not folder.is_dir():
            continue
        root = folder.resolve()
        if target == root or root in target.parents:
            raise InputError(f"--out {out} is inside the input folder {source}: the outputs would be read as inputs "
                             "by the next run; choose an --out outside every input folder")
