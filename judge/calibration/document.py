"""A small document model with two renderers, so the calibration report is written once and read as Markdown or HTML.

The report builds a list of blocks (headings, paragraphs, bullet lists, tables, figures, warnings); `to_markdown`
and `to_html` turn the same list into text. Both are pure functions of their input, so equal input gives equal
bytes. The HTML form is one self-contained file: figures are inlined as base64 `data:` URIs, the style sheet is
inline, nothing is fetched from anywhere, and every piece of text (labels, item ids, notes, signature) is escaped.

May import only the standard library.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Code:
    """Inline code: an identifier shown verbatim (backticks in Markdown, <code> in HTML)."""

    text: str


Inline = str | Code
Span = tuple[Inline, ...]  # one line of running text


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    """Lines of one paragraph. `hard_breaks`: each line ends a visual line (Markdown's two trailing spaces)."""

    lines: tuple[Span, ...]
    hard_breaks: bool = False


@dataclass(frozen=True)
class Bullets:
    items: tuple[Span, ...]


@dataclass(frozen=True)
class Table:
    """Rows of plain values; the first column names the row (a row header in HTML). `caption` says what the
    table holds; the HTML form shows it (Markdown has no captions and keeps the paragraph before the table)."""

    header: tuple[Any, ...]
    rows: tuple[tuple[Any, ...], ...]
    caption: str = ""


@dataclass(frozen=True)
class Figure:
    """A figure by key; rendered only when the renderer is given that key (plots may be switched off)."""

    key: str
    alt: str


@dataclass(frozen=True)
class Caution:
    text: str


Block = Heading | Paragraph | Bullets | Table | Figure | Caution


def number(x: float | None, digits: int = 3) -> str:
    """A table cell for a number: fixed digits, "undefined" where it is (None or NaN)."""
    return "undefined" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def statistic(result: Any, name: str, digits: int = 3) -> str:
    """A table cell for statistic `name` of a result (judge.calibration.stats.undefined.Statistics): fixed
    digits, or "undefined (why)" with the reason the result records."""
    value = getattr(result, name)
    if value is None or not math.isfinite(value):
        return f"undefined ({result.undefined.get(name, 'reason not recorded')})"
    return f"{value:.{digits}f}"


def para(*lines: Span | str, hard_breaks: bool = False) -> Paragraph:
    return Paragraph(tuple((line,) if isinstance(line, str) else line for line in lines), hard_breaks)


def table(header: Sequence[Any], rows: Sequence[Sequence[Any]], caption: str = "") -> Table:
    return Table(tuple(header), tuple(tuple(row) for row in rows), caption)


# ---------------------------------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------------------------------

def _md_span(span: Span) -> str:
    return "".join(f"`{part.text}`" if isinstance(part, Code) else part for part in span)


def _md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks: Sequence[Block], figures: Mapping[str, str]) -> str:
    """Markdown text; `figures` maps a figure key to its file name relative to the report."""
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append("#" * block.level + " " + block.text)
        elif isinstance(block, Paragraph):
            out += [_md_span(line) + ("  " if block.hard_breaks else "") for line in block.lines]
        elif isinstance(block, Bullets):
            out += ["- " + _md_span(item) for item in block.items]
        elif isinstance(block, Table):
            out += ["| " + " | ".join(_md_cell(h) for h in block.header) + " |",
                    "|" + "|".join("---" for _ in block.header) + "|"]
            out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
        elif isinstance(block, Figure):
            if block.key not in figures:
                continue
            out.append(f"![{block.alt}]({figures[block.key]})")
        elif isinstance(block, Caution):
            out.append(f"> **Warning:** {block.text}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


# ---------------------------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------------------------

# Dark text on light ground (contrast well above WCAG AA); the warning is marked by its word and border, not by
# colour alone; wide tables scroll inside a focusable region instead of widening the page.
_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1a1a1a; background: #fff;
       line-height: 1.45; margin: 0; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1, h2, h3 { line-height: 1.2; }
h2 { border-bottom: 1px solid #bbb; padding-bottom: .2rem; margin-top: 2rem; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; background: #f0f0f0; padding: 0 .2em;
       overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; margin: .5rem 0 1rem; }
.table-wrap:focus { outline: 2px solid #0b57d0; }
table { border-collapse: collapse; font-size: .92rem; }
caption { text-align: left; font-weight: 600; padding-bottom: .2rem; }
th, td { border: 1px solid #999; padding: .2rem .5rem; text-align: left; vertical-align: top; }
thead th { background: #e8e8e8; }
tbody th { font-weight: 600; background: #f6f6f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
.warning { border-left: 6px solid #8a4b00; background: #fff4e0; padding: .5rem .75rem; }
"""

_NUMBER = re.compile(r"^[-+−]?(\d+(\.\d+)?|<0\.0001|–)( ± [-\d.–]+)?$")


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _html_span(span: Span) -> str:
    return "".join(f"<code>{_esc(part.text)}</code>" if isinstance(part, Code) else _esc(part) for part in span)


def _html_table(block: Table, label: str) -> str:
    def cell(value: Any) -> str:
        numeric = isinstance(value, int | float) or bool(_NUMBER.match(str(value)))
        return f'<td class="num">{_esc(value)}</td>' if numeric else f"<td>{_esc(value)}</td>"

    head = "".join(f'<th scope="col">{_esc(h)}</th>' for h in block.header)
    body = "".join(f'<tr><th scope="row">{_esc(row[0])}</th>' + "".join(cell(c) for c in row[1:]) + "</tr>\n"
                   for row in block.rows)
    return (f'<div class="table-wrap" role="region" tabindex="0" aria-label="{_esc(label)}">\n'
            f"<table>\n<caption>{_esc(label)}</caption>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n"
            "</table>\n</div>")


def to_html(blocks: Sequence[Block], figures: Mapping[str, bytes], *, title: str) -> str:
    """One self-contained HTML page; `figures` maps a figure key to its PNG bytes (inlined as a data URI).

    A table without its own caption is captioned with the heading of its section, so a screen reader always
    announces what a table is.
    """
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">', f"<title>{_esc(title)}</title>",
           f"<style>{_STYLE}</style>", "</head>", "<body>", "<main>"]
    section = title
    for block in blocks:
        if isinstance(block, Heading):
            level = min(max(block.level, 1), 6)
            out.append(f"<h{level}>{_esc(block.text)}</h{level}>")
            section = block.text
        elif isinstance(block, Paragraph):
            sep = "<br>\n" if block.hard_breaks else "\n"
            out.append("<p>" + sep.join(_html_span(line) for line in block.lines) + "</p>")
        elif isinstance(block, Bullets):
            out.append("<ul>\n" + "\n".join(f"<li>{_html_span(item)}</li>" for item in block.items) + "\n</ul>")
        elif isinstance(block, Table):
            out.append(_html_table(block, f"{section}: {block.caption}" if block.caption else section))
        elif isinstance(block, Figure) and block.key in figures:
            data = base64.b64encode(figures[block.key]).decode("ascii")
            out.append(f'<figure><img src="data:image/png;base64,{data}" alt="{_esc(block.alt)}">'
                       f"<figcaption>{_esc(block.alt)}</figcaption></figure>")
        elif isinstance(block, Caution):
            out.append(f'<p class="warning" role="note"><strong>Warning:</strong> {_esc(block.text)}</p>')
    out += ["</main>", "</body>", "</html>"]
    return "\n".join(out) + "\n"
