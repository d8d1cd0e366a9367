"""What the MkDocs hooks that generate a section of a page share (api_reference.py, decision_table.py,
format_table.py, measure_reference.py, option_reference.py).

Not a hook itself (mkdocs.yml does not list it): MkDocs 1.6 loads each hook file by path with the hook's folder on
sys.path while the file runs, so the hooks import this module as a sibling (`from generated_section import ...`),
at the top of the file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def checkout_first() -> None:
    """The build runs from the checkout: its `judge` comes first on sys.path, as `python -m` puts it."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def insert_section(markdown: str, page, page_name: str, marker: str, section: str, render: Callable[[], str]) -> str:
    """`markdown` with `marker` replaced by `render()` on the page `page_name` (other pages as they are); that page
    without its marker fails the build, naming the page, the marker and the `section` that has no place."""
    if page.file.src_uri != page_name:
        return markdown
    if marker not in markdown:
        from mkdocs.exceptions import PluginError

        raise PluginError(f"docs/{page_name} lost its marker {marker}: the generated {section} has no place")
    return markdown.replace(marker, render())
