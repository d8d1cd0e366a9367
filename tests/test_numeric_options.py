"""Every numeric option of every command, found in typer's own model of the CLI (issue 25, item 11).

The test enumerates; it lists nothing: an int or float option added to any command later is fed the same edge
values. Each value must either be refused as a usage error (exit 2, one line that names the option), or be
accepted as a value inside the option's declared range (judge.cli.options.Bounds, printed in --help and in
docs/errors.md) — never a traceback, never a NaN or an infinity taken as a setting.

Only the option under test is given: click processes the options given on the command line before it notices a
missing required argument, so an accepted value is followed by an error about that argument (exit 2) and
nothing runs; a command without required arguments runs in an empty folder.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any, get_args

import pytest
import typer.main
from typer.testing import CliRunner

from judge.cli.app import app
from judge.cli.options import Bounds

EDGE_VALUES = ("0", "-1", "nan", "inf", "-inf", str(10**18))


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    subcommands = getattr(command, "commands", None)
    if subcommands:
        for name, sub in subcommands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield path, command


def _annotation(param: Any) -> Any:
    """The Python type typer built the parameter from (typer >= 0.20 keeps it; older ones wrap click's types)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        return descriptor.annotation
    return {"integer": int, "float": float}.get(getattr(param.type, "name", "").split()[0])


def _is_numeric(param: Any) -> bool:
    annotation = _annotation(param)
    kinds = set(get_args(annotation)) - {type(None)} if get_args(annotation) else {annotation}
    return bool(kinds) and kinds <= {int, float}


def numeric_options() -> list[tuple[tuple[str, ...], Any]]:
    root = typer.main.get_command(app)
    for name in root.list_commands(None):  # type: ignore[attr-defined]  # built when asked (cli.app.LazyCommands)
        root.get_command(None, name)  # type: ignore[attr-defined]
    return [(path, param) for path, command in _commands(root) for param in command.params
            if _is_numeric(param) and param.param_type_name == "option"]


OPTIONS = numeric_options()


def _bounds(param: Any) -> Bounds | None:
    callback = getattr(param.callback, "__wrapped__", param.callback)  # typer wraps callbacks (functools.wraps)
    return callback if isinstance(callback, Bounds) else None


def test_the_walk_finds_the_numeric_options_of_every_command_group():
    found = {(" ".join(path), param.opts[0]) for path, param in OPTIONS}
    # a few known ones, to show the walk reaches eval, calibrate and the baselines
    assert {("eval", "--timeout"), ("calibrate", "--n-boot"), ("calibrate", "--seed"),
            ("baseline pa-bleu", "--smooth-value")} <= found
    assert len(OPTIONS) >= 20


@pytest.mark.parametrize("path,param", [pytest.param(p, o, id=f"{' '.join(p)} {o.opts[0]}") for p, o in OPTIONS])
def test_every_numeric_option_declares_its_range(path, param):
    """The one mechanism: the option's callback is its Bounds, and --help prints the range."""
    bounds = _bounds(param)
    assert bounds is not None, f"{' '.join(path)} {param.opts[0]}: declare it with options.number"
    assert f"Range: {bounds.interval}" in (param.help or "")


@pytest.mark.parametrize("value", EDGE_VALUES)
@pytest.mark.parametrize("path,param", [pytest.param(p, o, id=f"{' '.join(p)} {o.opts[0]}") for p, o in OPTIONS])
def test_numeric_option_edge_value(path, param, value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    option = param.opts[0]
    result = CliRunner().invoke(app, [*path, f"{option}={value}"])
    output = result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    refused = re.search(rf"Invalid value for '{re.escape(option)}'|'{re.escape(option)}'.*not a valid", output)
    if refused:
        assert result.exit_code == 2 and len(lines) == 1, output
        return
    # accepted: a finite number inside the declared range, and the run went on to its next (one-line) error
    number = float(value)
    assert math.isfinite(number), f"{' '.join(path)} {option} accepted {value}: {output}"
    bounds = _bounds(param)
    assert bounds is not None and bounds.contains(number), f"{option} accepted {value} outside its range"
    assert result.exit_code != 0 or "nan" not in result.stdout.lower(), output
    assert result.exit_code in (0, 2) and len(lines) <= 1, output
