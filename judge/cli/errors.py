"""Known errors become one line on stderr and a non-zero exit code; tracebacks only with --debug."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape

from judge.errors import BudgetExceeded, ConfigurationError, InputError

stderr = Console(stderr=True)

EXIT_INPUT = 2
EXIT_CONFIGURATION = 3
EXIT_BUDGET = 4


@contextmanager
def user_errors(debug: bool = False) -> Iterator[None]:
    try:
        yield
    except (InputError, ConfigurationError, BudgetExceeded) as exc:
        if debug:
            raise
        code, label = {InputError: (EXIT_INPUT, "input error"),
                       ConfigurationError: (EXIT_CONFIGURATION, "configuration error"),
                       BudgetExceeded: (EXIT_BUDGET, "budget reached")}[type(exc)]
        stderr.print(f"[bold red]argue-judge: {label}:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        if isinstance(exc, BudgetExceeded):
            stderr.print("Every decision made so far is in the cache: rerun with a higher --max-cost to go on.")
        raise typer.Exit(code) from None
    except KeyboardInterrupt:
        stderr.print("argue-judge: interrupted; decisions made so far are in the cache.")
        raise typer.Exit(130) from None

