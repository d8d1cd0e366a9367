"""MkDocs hook: the Python API reference of docs/python.md, generated from judge.api at build time.

Each call of `judge.api.__all__` appears with its signature and its docstring, whose examples are the doctests CI
runs (tests/test_api.py): the page cannot show an example that does not run. The page holds the marker below where
the reference goes; a page without it fails the build.
"""

from __future__ import annotations

import inspect
import re

from generated_section import checkout_first, insert_section

MARKER = "<!-- api-reference -->"
PAGE = "python.md"
EXAMPLE = re.compile(r"^(>>>|\.\.\.)( |$)")


def _api():
    checkout_first()
    from judge import api

    return api


def _markdown(doc: str) -> str:
    """Prose as paragraphs, each run of doctest lines (with the output lines after them) as one pycon block."""
    out: list[str] = []
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        if EXAMPLE.match(lines[i].strip()):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i].strip() if EXAMPLE.match(lines[i].strip()) else lines[i])
                i += 1
            out += ["```pycon", *block, "```", ""]
        elif lines[i].strip():
            paragraph = []
            while i < len(lines) and lines[i].strip() and not EXAMPLE.match(lines[i].strip()):
                paragraph.append(lines[i].strip())
                i += 1
            out += [" ".join(paragraph), ""]
        else:
            i += 1
    return "\n".join(out)


def _parameters(member) -> str:
    """The parameters as written in the source (annotations are strings under `from __future__ import
    annotations`), one per line."""
    parts = []
    for parameter in inspect.signature(member).parameters.values():
        if parameter.kind is parameter.KEYWORD_ONLY and not any(p.startswith("*") for p in parts):
            parts.append("*")
        text = ("**" if parameter.kind is parameter.VAR_KEYWORD else "") + parameter.name
        if parameter.annotation is not parameter.empty:
            text += f": {parameter.annotation}"
        if parameter.default is not parameter.empty:
            text += f" = {parameter.default!r}"
        parts.append(text)
    return "".join(f"\n    {part}," for part in parts) + "\n" if parts else ""


def render() -> str:
    api = _api()
    out: list[str] = []
    for name in api.__all__:
        member = getattr(api, name)
        kind = "class" if inspect.isclass(member) else "def"
        out += [f"## `judge.{name}`", "", "```python", f"{kind} {name}({_parameters(member)})", "```", "",
                _markdown(inspect.getdoc(member) or ""), ""]
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (MkDocs' hook signature)
    return insert_section(markdown, page, PAGE, MARKER, "API reference", render)
