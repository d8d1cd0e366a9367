"""One collector for everything a run wants to tell the user that is not an error.

Library code adds messages (or lets `capture_logging` / `capture_warnings` turn a library's log records and
Python warnings into messages); the CLI renders the collector once at the end and writes it to
run-summary.json. Nothing is printed from library code, nothing is lost between channels.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

Level = Literal["warning", "note"]

# What varies between warnings of one kind: a leading `file:line: ` and the quoted ids or numbers in the text.
_LOCATION = re.compile(r"^\S+:\d+: ")
_QUOTED = re.compile(r"'[^']*'|\d+")


@dataclass(frozen=True)
class Diagnostic:
    message: str
    source: str                 # where it came from: "inputs", "documents", "scores", "baselines", ...
    level: Level = "warning"    # warning: a number may mislead (undefined, skipped); note: what was done
    # What it is about, when it is about one input: the file and line of a report, or a request. Kept in
    # run-summary.json, so the warnings of several shards can be put in a single run's order without reading
    # their text (judge.run.merge).
    file: str | None = None
    line: int | None = None
    request: str | None = None

    @property
    def place(self) -> tuple[int, str, int] | None:
        """Where a single run lists it among its stage's diagnostics: reports by file and line first, then
        requests by id; None for a diagnostic about no one input (listed after those, as it came)."""
        if self.file is not None:
            return (0, self.file, self.line or 0)
        if self.request is not None:
            return (1, self.request, 0)
        return None

    def as_json(self) -> dict[str, str | int]:
        found: dict[str, str | int] = {"message": self.message, "source": self.source, "level": self.level}
        for name in ("file", "line", "request"):
            if getattr(self, name) is not None:
                found[name] = getattr(self, name)
        return found

    @classmethod
    def from_json(cls, item: dict[str, object]) -> Diagnostic:
        """An entry of run-summary.json's `diagnostics`; raises KeyError or TypeError if it is not one."""
        level = item.get("level", "warning")
        line = item.get("line")
        return cls(str(item["message"]), str(item["source"]), "note" if level == "note" else "warning",
                   _optional_text(item.get("file")), int(line) if isinstance(line, int) else None,
                   _optional_text(item.get("request")))


def _optional_text(value: object) -> str | None:
    return None if value is None else str(value)


class Diagnostics:
    def __init__(self, items: Iterable[Diagnostic] = ()):
        # An ordered set (a dict keeps insertion order): a run with 100,000 empty reports adds 100,000 warnings,
        # and a membership test on a list made that quadratic.
        self._items: dict[Diagnostic, None] = {}
        for item in items:
            self.add(item)

    def add(self, item: Diagnostic) -> None:
        """Said once: the same message from the same source (e.g. a log line and a count) is kept once."""
        self._items.setdefault(item, None)

    def warn(self, message: str, source: str) -> None:
        self.add(Diagnostic(message, source, "warning"))

    def note(self, message: str, source: str) -> None:
        self.add(Diagnostic(message, source, "note"))

    def extend(self, messages: Iterable[str], source: str, level: Level = "warning") -> None:
        for message in messages:
            self.add(Diagnostic(message, source, level))

    def merge(self, other: Diagnostics) -> None:
        for item in other:
            self.add(item)

    def messages(self, level: Level | None = None) -> list[str]:
        return [d.message for d in self._items if level is None or d.level == level]

    def as_json(self) -> list[dict[str, str | int]]:
        # not dataclasses.asdict, which deep-copies: a run with 100,000 empty reports has 100,000 of these
        return [d.as_json() for d in self._items]

    def collapsed(self) -> list[tuple[Diagnostic, int]]:
        """Each kind of diagnostic once, as its first message and how many there are of that kind, in order of
        first appearance. Messages of one kind differ only in a leading `file:line: ` and in quoted ids or
        numbers ("...: report of run 'a' for request '7' is empty ..."), so 100,000 empty reports are one line
        on the console; every message stays in run-summary.json."""
        first: dict[tuple[str, str, str], Diagnostic] = {}
        counts: Counter[tuple[str, str, str]] = Counter()
        for item in self._items:
            kind = (item.level, item.source, _QUOTED.sub("_", _LOCATION.sub("", item.message)))
            first.setdefault(kind, item)
            counts[kind] += 1
        return [(item, counts[kind]) for kind, item in first.items()]

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @contextmanager
    def capture_logging(self, logger: str, source: str) -> Iterator[None]:
        """Log records of `logger` (WARNING and above) become diagnostics instead of stderr lines."""
        collector = self

        class _Collect(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                collector.warn(record.getMessage(), source)

        target = logging.getLogger(logger)
        handler = _Collect(logging.WARNING)
        propagate = target.propagate
        target.addHandler(handler)
        target.propagate = False
        try:
            yield
        finally:
            target.removeHandler(handler)
            target.propagate = propagate

    @contextmanager
    def capture_warnings(self, category: type[Warning], source: str) -> Iterator[None]:
        """Python warnings of `category` raised inside become diagnostics (every one, not once per place);
        other warnings go on as usual."""
        caught: list[warnings.WarningMessage] = []
        try:
            with warnings.catch_warnings(record=True) as recorded:
                warnings.simplefilter("always", category)
                caught = recorded  # type: ignore[assignment]
                yield
        finally:
            for warning in caught:
                if issubclass(warning.category, category):
                    self.warn(str(warning.message), source)
                else:  # not ours: hand it back to the usual machinery, outside the recording context
                    warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
