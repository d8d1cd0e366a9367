"""Errors a user can act on. The CLI turns them into one line and exit code 2; nothing else is caught."""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Bad user input: names the file, the line (1-based, when there is one) and what to fix."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path or ""
        if self.path and self.line is not None:
            where = f"{self.path}:{self.line}"
        return f"{where}: {self.message}" if where else self.message


class SettingError(ValueError):
    """A setting out of its declared range or choices (judge.settings rules), or one that needs another: a
    ValueError naming the argument for the API, one line and exit code 2 on the command line."""


class ConfigurationError(Exception):
    """A setting or installation problem (no model chosen, extra not installed, weights missing ...)."""


def missing_extra(feature: str, extra: str) -> ConfigurationError:
    """The one-line error of a feature whose optional dependencies are not installed, naming the extra that
    installs them (the core install leaves out what only some features need)."""
    return ConfigurationError(f"{feature}: the [{extra}] extra is not installed; pip install 'argue-judge[{extra}]'")


class BudgetExceeded(Exception):
    """Raised inside the LLM client when the next call would cross --max-cost."""


class OutputError(Exception):
    """An output or the decision cache could not be written (disk full, no permission). Names the file; what was
    written before stays whole (outputs are renamed into place only when complete)."""
