"""The `argue-judge` command."""

from __future__ import annotations

import logging

import typer

from judge._version import __version__
from judge.cli import baseline, cache, interop
from judge.cli.calibrate import calibrate_command
from judge.cli.errors import OneLineErrors
from judge.cli.evaluate import eval_command, score_command
from judge.cli.merge import merge_command
from judge.cli.view import view_command

app = typer.Typer(name="argue-judge", help="ARGUE evaluation of cited reports with LLM judges.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False, cls=OneLineErrors)
app.command("eval")(eval_command)
app.command("score")(score_command)
app.command("merge")(merge_command)
app.command("calibrate")(calibrate_command)
app.command("view")(view_command)
app.add_typer(cache.app, name="cache")
app.add_typer(baseline.app, name="baseline")
app.add_typer(interop.import_app, name="import")
app.add_typer(interop.export_app, name="export")


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
