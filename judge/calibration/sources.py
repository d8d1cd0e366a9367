"""Where calibration items come from: the labelled data sets named on the command line, each read, optionally
stripped of items held back for another purpose (`--exclude`), sampled (stratified, seeded) and described in one
note. The CLI passes paths in; the API passes nugget banks and documents as paths or as objects (judge.formats.loader
reads both, writing nothing)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from judge.calibration.importers import (
    ImportResult,
    PartialPolicy,
    items_from_nugget_banks,
    read_attributionbench,
    read_wice,
    stratified_sample,
)
from judge.calibration.items import CalibrationItem
from judge.diagnostics import Diagnostics
from judge.errors import InputError
from judge.formats import loader
from judge.types import Document, NuggetBank

WICE_PARTIAL_POLICIES: tuple[PartialPolicy, ...] = ("strict", "exclude", "separate")
# The names `--sample` accepts per data set, and the data set each one means.
SOURCE_KEYS = {"attributionbench": "AttributionBench", "wice": "WiCE", "nuggets": "nugget banks"}


@dataclass(frozen=True)
class SampleSize:
    """`--sample`: one size for every data set ("40"), or one per data set ("attributionbench=200,wice=150"; a
    data set not named is used whole)."""

    every: int | None = None
    per_source: tuple[tuple[str, int], ...] = ()

    @classmethod
    def parse(cls, text: str) -> SampleSize:
        text = text.strip()
        if text.isdigit():
            return cls(every=_positive(text, text))
        sizes: dict[str, int] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, _, size = part.partition("=")
            key = key.strip().lower()
            if key not in SOURCE_KEYS or not size.strip().isdigit():
                raise InputError(f"--sample {text!r}: give N, or NAME=N[,NAME=N...] with NAME one of "
                                 f"{', '.join(SOURCE_KEYS)} (e.g. attributionbench=200,wice=150)")
            sizes[key] = _positive(size.strip(), text)
        if not sizes:
            raise InputError(f"--sample {text!r}: give N, or NAME=N[,NAME=N...]")
        return cls(per_source=tuple(sorted(sizes.items())))

    def of(self, source: str) -> int | None:
        """The sample size of the data set `source` (a SOURCE_KEYS value); None: every item."""
        if self.every is not None:
            return self.every
        return next((n for key, n in self.per_source if SOURCE_KEYS[key] == source), None)

    def __str__(self) -> str:
        return str(self.every) if self.every is not None else "+".join(f"{k}={n}" for k, n in self.per_source)


def _positive(size: str, text: str) -> int:
    if int(size) < 1:
        raise InputError(f"--sample {text!r}: a sample size must be at least 1")
    return int(size)


@dataclass(frozen=True)
class Exclusion:
    """`--exclude FILE`: item ids left out before sampling (e.g. the items a prompt or threshold was tuned on, from
    that run's items.jsonl), so agreement is measured on data the tuning never saw."""

    path: Path
    item_ids: frozenset[str]

    @classmethod
    def read(cls, path: Path) -> Exclusion:
        """An items.jsonl written by `calibrate` (its `item_id` fields), or plain text with one id per line."""
        ids: set[str] = set()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read the items to exclude ({exc})") from exc
        for number, line in enumerate(lines, 1):
            line = line.strip()
            if not line:
                continue
            if line.startswith("{"):
                try:
                    item_id = json.loads(line).get("item_id")
                except (json.JSONDecodeError, AttributeError):
                    item_id = None
                if not isinstance(item_id, str):
                    raise InputError(f"{path}:{number}: expected a JSON object with an \"item_id\" string (a line "
                                     "of a calibration items.jsonl) or a plain item id")
                ids.add(item_id)
            else:
                ids.add(line)
        if not ids:
            raise InputError(f"{path}: no item ids to exclude (the file is empty)")
        return cls(path, frozenset(ids))

    @property
    def digest(self) -> str:
        """A short hash of the excluded ids (the signature records it, not the file's path)."""
        return hashlib.sha256("\n".join(sorted(self.item_ids)).encode("utf-8")).hexdigest()[:8]


@dataclass(frozen=True)
class ItemSources:
    """The labelled data sets of one calibration run (None / empty: not used)."""

    attributionbench: Path | None = None
    wice: Path | None = None
    wice_partial: PartialPolicy = "strict"
    nuggets: tuple[Path, ...] | tuple[NuggetBank, ...] = ()   # files, or banks as given to the API
    docs: tuple[Path, ...] | tuple[Document, ...] = ()        # files (indexed in index_dir), or documents
    index_dir: Path = Path("caches/docstore")


def load_items(sources: ItemSources, sample: SampleSize | None, seed: int, diagnostics: Diagnostics,
               exclude: Exclusion | None = None) -> list[CalibrationItem]:
    """Every source's items less the excluded ones (a stratified sample when `sample` gives the source a size),
    with one note per source."""
    if sources.wice_partial not in WICE_PARTIAL_POLICIES:
        raise InputError(f"--wice-partial is {sources.wice_partial!r}; choose {', '.join(WICE_PARTIAL_POLICIES)}")
    loaded: list[tuple[str, ImportResult]] = []
    if sources.attributionbench:
        loaded.append(("AttributionBench", read_attributionbench(sources.attributionbench)))
    if sources.wice:
        loaded.append(("WiCE", read_wice(sources.wice, partial=sources.wice_partial)))
    if sources.nuggets:
        if not sources.docs:
            raise InputError("--nuggets needs --docs: the documents the nugget answers are bound to")
        with diagnostics.capture_logging("judge.formats.documents", "documents"), \
                loader.documents(list(sources.docs), sources.index_dir) as store:
            loaded.append(("nugget banks", items_from_nugget_banks(loader.banks(list(sources.nuggets)), store.get)))
    items: list[CalibrationItem] = []
    for name, imported in loaded:
        available = [i for i in imported.items if exclude is None or i.item_id not in exclude.item_ids]
        size = sample.of(name) if sample else None
        chosen = stratified_sample(available, size, seed) if size else available
        items.extend(chosen)
        note = f"{name}: {len(chosen)} of {len(imported.items)} items"
        if len(available) < len(imported.items):
            note += f" ({len(imported.items) - len(available)} excluded by {exclude.path.name})"  # type: ignore[union-attr]
        if size:
            note += f" (stratified sample, seed {seed})"
        if imported.skipped:
            note += "; skipped " + ", ".join(f"{k}: {v}" for k, v in sorted(imported.skipped.items()))
        diagnostics.note(note, "calibration")
    return items
