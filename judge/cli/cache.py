"""`argue-judge cache stats|clear|export|import`: a local directory or a shared Redis cache alike."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from judge.cli import options
from judge.cli.errors import stderr, user_errors
from judge.cli.render import console
from judge.errors import ConfigurationError, OutputError
from judge.formats._jsonl import decode_utf8
from judge.formats.atomic import atomic_path
from judge.llm.cache.backends import CacheBackendError, is_url, open_backend
from judge.llm.cache.store import clear_cache_directory, existing_cache_directory, open_decision_cache
from judge.llm.cache.transfer import export_entries, import_entries

app = typer.Typer(help="Inspect, empty or move the decision cache (a directory or redis://HOST:PORT/DB).",
                  no_args_is_help=True)


@contextmanager
def _failures(target: str, debug: bool, *, writing: bool) -> Iterator[None]:
    """Known errors as one line; a store that fails mid-command (a lost Redis connection, a locked or damaged
    database) too: exit 6 when the command was writing to it, 3 (an unreadable cache) when reading."""
    with user_errors(debug):
        try:
            yield
        except CacheBackendError as exc:
            if writing:
                raise OutputError(f"cannot write the decision cache at {target}: {exc}") from exc
            raise ConfigurationError(f"cannot read the decision cache at {target}: {exc}") from exc


def _target(cache: str) -> str | Path:
    """A URL as given; a directory only when it holds a cache (opening a mistyped path would create one)."""
    return cache if is_url(cache) else existing_cache_directory(Path(cache))


@app.command("stats")
def stats(cache: options.Cache = options.DEFAULT_CACHE_TARGET, debug: options.Debug = False) -> None:
    """How many decisions are cached and how much space they use."""
    with _failures(cache, debug, writing=False):
        # a directory's error for a database it cannot open says how to reset it
        store = open_decision_cache(_target(cache))
        try:
            info = store.stats()
        finally:
            store.close()
    size = "" if info["bytes"] is None else f", {info['bytes'] / 1e6:.2f} MB"
    where = info["location"]
    console.print(f"{where}: {info['entries']} cached decisions{size}", highlight=False, soft_wrap=True)


@app.command("clear")
def clear(cache: options.Cache = options.DEFAULT_CACHE_TARGET,
          yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
          debug: options.Debug = False) -> None:
    """Delete every cached decision (the next run asks the model again)."""
    if not yes:
        typer.confirm(f"Delete every cached decision in {cache}?", abort=True)
    with _failures(cache, debug, writing=True):
        if is_url(cache):
            store = open_decision_cache(cache)
            try:
                removed: int | None = store.clear()
            finally:
                store.close()
        else:  # a directory: this also cures a database that cannot be opened (DecisionCache's error says so)
            removed = clear_cache_directory(existing_cache_directory(Path(cache)))
    if removed is None:
        console.print(f"removed the unreadable decision cache database under {cache}", highlight=False,
                      soft_wrap=True)
    else:
        console.print(f"removed {removed} cached decisions", highlight=False, soft_wrap=True)


@app.command("export")
def export(cache: options.Cache = options.DEFAULT_CACHE_TARGET,
           out: Annotated[Path | None, typer.Option("--out", "-o", help="JSONL file (default: standard output).")]
           = None,
           debug: options.Debug = False) -> None:
    """Write every cached decision as JSONL (key, value, checksum), in key order: `cache import` reads it."""
    if out is not None and not out.parent.is_dir():
        problem = "is a file, not a folder" if out.parent.exists() else "does not exist; create it first"
        raise typer.BadParameter(f"{out.parent} {problem}", param_hint="--out")
    with _failures(cache, debug, writing=False):
        source = open_backend(_target(cache))
        try:
            if out is None:
                sys.stdout.writelines(export_entries(source))
                return
            with atomic_path(out) as temp, temp.open("w", encoding="utf-8") as handle:
                count = sum(handle.write(line) > 0 for line in export_entries(source)) - 1  # minus the header
        finally:
            source.close()
    stderr.print(f"exported {count} cached decisions from {cache} to {out}", highlight=False, soft_wrap=True)


@app.command("import")
def import_(file: Annotated[Path, typer.Argument(help="A `cache export` file.", exists=True, dir_okay=False)],
            cache: options.Cache = options.DEFAULT_CACHE_TARGET,
            overwrite: Annotated[bool, typer.Option(
                "--overwrite", help="Replace an answer the cache already holds under the same key (default: keep "
                "it; the first answer recorded is the one every rerun replays).")] = False,
            debug: options.Debug = False) -> None:
    """Add exported decisions to a cache (a directory or Redis)."""
    with _failures(cache, debug, writing=True):
        destination = open_backend(cache)
        try:
            with file.open("rb") as lines:
                text = (decode_utf8(line, str(file), number) for number, line in enumerate(lines, start=1))
                counts = import_entries(destination, text, str(file), overwrite=overwrite)
        finally:
            destination.close()
    console.print(f"imported into {cache}: {counts.added} added, {counts.unchanged} already there, "
                  + (f"{counts.replaced} replaced" if overwrite else f"{counts.conflicts} conflicting kept"),
                  highlight=False, soft_wrap=True)
