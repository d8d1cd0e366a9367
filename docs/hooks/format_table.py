"""MkDocs hook: the table of input formats in docs/inputs.md, generated from the format registry at build time
(judge.formats.registry: one module per format, each describing itself in one line), so a new format appears in it
without an edit to the page. The page holds the marker below where the table goes; a page without it fails the
build.
"""

from __future__ import annotations

from generated_section import checkout_first, insert_section

MARKER = "<!-- format-table -->"
PAGE = "inputs.md"


def render() -> str:
    """One row per registered format, in the order their records are told apart."""
    checkout_first()
    from judge.formats import registry

    return registry.table()


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (MkDocs' hook signature)
    return insert_section(markdown, page, PAGE, MARKER, "format table", render)
