"""`argue-judge cache stats|clear|export|import`: a local directory or a shared Redis cache alike."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from judge.api import cache_stats, clear_cache, export_cache, import_cache
from judge.cli import options
from judge.cli.errors import stderr, user_errors
from judge.cli.render import console

app = typer.Typer(help="Inspect, empty or move the decision cache (a directory or redis://HOST:PORT/DB).",
                  no_args_is_help=True)


@app.command("stats")
def stats(cache: options.Cache = options.DEFAULT_CACHE_TARGET, debug: options.Debug = False) -> None:
    """How many decisions are cached and how much space they use."""
    with user_errors(debug):
        info = cache_stats(cache)
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
    with user_errors(debug):
        removed = clear_cache(cache)
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
    with user_errors(debug):
        exported = export_cache(cache, out)
        if out is None:
            sys.stdout.writelines(exported)  # type: ignore[arg-type]
            return
    stderr.print(f"exported {exported} cached decisions from {cache} to {out}", highlight=False, soft_wrap=True)


@app.command("import")
def import_(file: Annotated[Path, typer.Argument(help="A `cache export` file.", exists=True, dir_okay=False)],
            cache: options.Cache = options.DEFAULT_CACHE_TARGET,
            overwrite: Annotated[bool, typer.Option(
                "--overwrite", help="Replace an answer the cache already holds under the same key (default: keep "
                "it; the first answer recorded is the one every rerun replays).")] = False,
            debug: options.Debug = False) -> None:
    """Add exported decisions to a cache (a directory or Redis)."""
    with user_errors(debug):
        counts = import_cache(file, cache, overwrite=overwrite)
    console.print(f"imported into {cache}: {counts.added} added, {counts.unchanged} already there, "
                  + (f"{counts.replaced} replaced" if overwrite else f"{counts.conflicts} conflicting kept"),
                  highlight=False, soft_wrap=True)
