"""MkDocs hook: the option reference of docs/commands.md, generated from the CLI itself at build time.

Every command and subcommand of `argue-judge` (judge.cli.app.COMMANDS, built by `load_command` exactly as the CLI
builds it) gets a table of its arguments and options with their defaults and their `--help` texts, so the page
lists every option there is and cannot list one there is not. The page holds the marker below where the reference
goes; a page without it fails the build.

Typer (0.29 here) builds its commands on a click of its own, `typer._click`, so the parameters and groups are told
apart by what they are (`param_type_name`, `list_commands`), not by isinstance against the `click` package.
"""

from __future__ import annotations

import enum
import html

from generated_section import checkout_first, insert_section

MARKER = "<!-- option-reference -->"
PAGE = "commands.md"


def _cell(text: str) -> str:
    """One table cell: a single line, its markup shown as text ("<name>.scores.tsv") and its pipes escaped."""
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def _default(parameter) -> str:
    default = parameter.default
    if callable(default) or default is None or default == () or parameter.required:
        return "required" if parameter.required else "–"
    if isinstance(default, bool):  # a flag
        if parameter.secondary_opts:  # --truncate/--no-truncate: name the one that applies by default
            return f"`{(parameter.opts if default else parameter.secondary_opts)[0]}`"
        return "on" if default else "off"
    return f"`{default.value if isinstance(default, enum.Enum) else default}`"


def _rows(command) -> list[str]:
    rows = []
    for parameter in command.params:
        if parameter.param_type_name == "argument":
            name = f"`{parameter.name.upper()}{' ...' if parameter.nargs == -1 else ''}`"
        elif parameter.hidden:
            continue
        else:
            name = ", ".join(f"`{opt}`" for opt in [*parameter.opts, *parameter.secondary_opts])
        help_text = getattr(parameter, "help", None) or ""
        if getattr(parameter, "show_envvar", False) and parameter.envvar:  # --help prints it: so does the page
            help_text += f" Environment variable: {parameter.envvar}."
        rows.append(f"| {name} | {_default(parameter)} | {_cell(help_text)} |")
    return rows


def _commands(command, path: list[str]):
    """(path, command) of every command that runs, subcommands of a group in the order --help lists them."""
    if hasattr(command, "list_commands"):
        context = command.context_class(command)
        for name in command.list_commands(context):
            yield from _commands(command.get_command(context, name), [*path, name])
    else:
        yield path, command


def render() -> str:
    checkout_first()
    from judge.cli.app import COMMANDS, load_command

    out: list[str] = []
    for name in COMMANDS:
        for path, command in _commands(load_command(name), [name]):
            out += [f"### argue-judge {' '.join(path)}", "", _cell((command.help or "").split("\n\n")[0]), "",
                    "| argument / option | default | meaning |", "|---|---|---|", *_rows(command), ""]
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (MkDocs' hook signature)
    return insert_section(markdown, page, PAGE, MARKER, "option reference", render)
