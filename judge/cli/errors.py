"""Known errors become one line on stderr and a non-zero exit code; tracebacks only with --debug.

Exit codes (documented in the README):
  0 success; 2 bad input or usage (the message names the file, the line or the option, and what to fix);
  3 configuration (no model, missing extra, refused credentials, unreadable cache, bad prompt template);
  4 budget reached; 5 the run failed (no decision succeeded, more failed than --max-failed-fraction, or the
  server was given up on after --give-up-after transport failures in a row; the outputs are written all the
  same); 6 an output or the cache could not be written (disk full, permission);
  130 interrupted (Ctrl-C, SIGINT); 143 terminated (SIGTERM: a batch scheduler, `timeout`, `docker stop`). Either
  way the judgments log is closed where the run stopped, and `--resume` goes on from it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
import typer.core
from rich.console import Console
from rich.markup import escape

from judge.errors import BudgetExceeded, ConfigurationError, InputError, OutputError, SettingError


class TolerantConsole(Console):
    """A console whose reader went away (`argue-judge score ... | head`) stops printing, silently: the command
    goes on, and its exit code says how the command ended, not that nobody read the rest (rich exits 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, (self.file or sys.stdout).fileno())
        except (OSError, ValueError):  # no file descriptor to redirect: quiet is enough
            pass
        finally:
            os.close(devnull)


stderr = TolerantConsole(stderr=True)

EXIT_INPUT = 2
EXIT_CONFIGURATION = 3
EXIT_BUDGET = 4
EXIT_RUN_FAILED = 5
EXIT_OUTPUT = 6
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so a run ends the way Ctrl-C ends it: every `finally` (the judgments log,
    the cache, the output lock) runs, and the exit code says which signal it was."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


def _end_like_an_interrupt_on_sigterm() -> None:
    # Python's default for SIGTERM is to die at once: no message, no `finally`, exit -15.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)


def _printing_never_fails() -> None:
    """A terminal whose encoding cannot show a character (LANG=C, PYTHONIOENCODING=ascii, a non-Latin run id)
    gets an escape for it instead of an exception: a run whose outputs are written must not fail in printing."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a closed or detached stream: nothing will be printed on it anyway
                pass

_LABELS: dict[type[Exception], tuple[int, str]] = {
    InputError: (EXIT_INPUT, "input error"),
    SettingError: (EXIT_INPUT, "usage error"),
    ConfigurationError: (EXIT_CONFIGURATION, "configuration error"),
    BudgetExceeded: (EXIT_BUDGET, "budget reached"),
    OutputError: (EXIT_OUTPUT, "output error"),
}
# typer >= 0.20 ships its own copy of click and raises that copy's exceptions; found through the public
# typer.BadParameter, the same line works with a typer that uses the click package.
_CLICK_EXCEPTION: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def say(label: str, message: str) -> None:
    """The one line every known error prints."""
    stderr.print(f"[bold red]argue-judge: {label}:[/] {escape(message)}", highlight=False, soft_wrap=True)


@contextmanager
def user_errors(debug: bool = False) -> Iterator[None]:
    try:
        yield
    except (InputError, SettingError, ConfigurationError, BudgetExceeded, OutputError) as exc:
        if debug:
            raise
        code, label = next(v for k, v in _LABELS.items() if isinstance(exc, k))
        message = str(exc)
        if isinstance(exc, BudgetExceeded):
            message += "; every decision made so far is in the cache: rerun with a higher --max-cost to go on"
        elif isinstance(exc, OutputError):
            message += "; decisions judged so far are in the cache, so a rerun after fixing this is free"
        say(label, message)
        raise typer.Exit(code) from None
    except KeyboardInterrupt as exc:
        what, code = ("terminated (SIGTERM)", EXIT_TERMINATED) if isinstance(exc, Terminated) \
            else ("interrupted", EXIT_INTERRUPTED)
        stderr.print(f"argue-judge: {what}; decisions made so far are in the cache (eval: rerun with --resume to "
                     "go on).", highlight=False, soft_wrap=True)
        raise typer.Exit(code) from None


def run_failed(reason: str) -> NoReturn:
    say("run failed", reason)
    raise typer.Exit(EXIT_RUN_FAILED)


class OneLineErrors(typer.core.TyperGroup):
    """The root command: a usage error (unknown option, invalid or missing value) is one line on stderr, exit 2,
    like every other error of ours, instead of typer's usage-and-box block."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        _printing_never_fails()
        _end_like_an_interrupt_on_sigterm()
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except typer.Abort as exc:
            if isinstance(exc.__cause__, Terminated):  # SIGTERM outside a command's user_errors
                stderr.print("argue-judge: terminated (SIGTERM).")
                sys.exit(EXIT_TERMINATED)
            stderr.print("argue-judge: aborted.")
            sys.exit(1)
        except _CLICK_EXCEPTION as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # a bare command: its help is already printed
                sys.exit(exc.exit_code)  # type: ignore[attr-defined]
            ctx = getattr(exc, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            say("usage error", " ".join(exc.format_message().split()) + hint)  # type: ignore[attr-defined]
            sys.exit(exc.exit_code)  # type: ignore[attr-defined]
        # without standalone mode typer returns a command's exit code (typer.Exit) or its return value (None)
        sys.exit(code if isinstance(code, int) else 0)
