"""The `argue-judge` command.

Each command's module is imported only when that command runs (or when `--help` lists them all): `eval` pulls in
litellm and instructor, `calibrate` scipy, and `score` or `merge`, which never call a model, should not wait
seconds for either (tests/test_cli_startup.py; benchmarks/startup.py measures it).
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

import typer

from judge._version import __version__
from judge.cli.errors import OneLineErrors

# name: (module, attribute): a command function, or a typer app of subcommands. In the order --help lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("judge.cli.evaluate", "eval_command"),
    "score": ("judge.cli.score", "score_command"),
    "merge": ("judge.cli.merge", "merge_command"),
    "calibrate": ("judge.cli.calibrate", "calibrate_command"),
    "view": ("judge.cli.view", "view_command"),
    "cache": ("judge.cli.cache", "app"),
    "baseline": ("judge.cli.baseline", "app"),
    "import": ("judge.cli.interop", "import_app"),
    "export": ("judge.cli.interop", "export_app"),
    "nuggets": ("judge.cli.nuggets", "app"),
    "sample": ("judge.cli.sample", "sample_command"),
}

# The Python API call behind each command (judge.api): the command parses options, makes this one call and prints
# what it returns, so no feature is the command line's alone (tests/test_api.py walks the commands to these).
API_CALLS: dict[str, str] = {
    "eval": "evaluate", "score": "score", "merge": "merge", "calibrate": "calibrate", "view": "html_view",
    "cache stats": "cache_stats", "cache clear": "clear_cache", "cache export": "export_cache",
    "cache import": "import_cache", "baseline exam": "baseline", "baseline rouge": "baseline",
    "baseline pa-bleu": "baseline", "baseline pa-meteor": "baseline", "import auto-argue": "read_judgments",
    "export auto-argue": "write_judgments", "nuggets create": "create_nuggets", "nuggets pool": "pool_nuggets",
    "sample": "sample",
}


def load_command(name: str) -> Any:
    """The click command `name` runs, built by typer from its module (imported now, not before) exactly as the
    root app would build it: registered on a root of its own (no completion options), then taken out of it."""
    module, attribute = COMMANDS[name]
    target = getattr(importlib.import_module(module), attribute)
    holder = typer.Typer(add_completion=False)
    holder.callback()(_no_options)  # a root with a callback is always a group, even around one command
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    return typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]


def _no_options() -> None:
    """The holder's own callback: it takes no options and does nothing."""


class LazyCommands(OneLineErrors):
    """The root group: knows its commands by name and builds one only when it is asked for."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in super().list_commands(ctx) if name not in COMMANDS)]

    def get_command(self, ctx: Any, name: str) -> Any:
        if name not in self.commands and name in COMMANDS:
            self.add_command(load_command(name), name)
        return super().get_command(ctx, name)


app = typer.Typer(name="argue-judge", help="ARGUE evaluation of cited reports with LLM judges.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False, cls=LazyCommands)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"argue-judge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    pass


def main() -> None:
    # Failures are recorded in the judgments and summarised at the end; the libraries' own log lines would
    # only repeat them mid-progress-bar.
    for noisy in ("instructor", "LiteLLM", "litellm", "httpx"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    app()


if __name__ == "__main__":  # python -m judge.cli.app (from a checkout) runs the CLI, as argue-judge does
    main()
