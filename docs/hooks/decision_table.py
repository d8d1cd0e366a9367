"""MkDocs hook: the table of the judge's decisions in docs/decisions.md, generated from the decision registry at
build time (judge.judging.decisions.REGISTRY: each decision module's `DECISION` declaration, in the flowchart's
order), so a new decision appears in it without an edit to the page. The page holds the marker below where the
table goes; a page without it fails the build.
"""

from __future__ import annotations

from generated_section import checkout_first, insert_section

MARKER = "<!-- decision-table -->"
PAGE = "decisions.md"
HEADER = ("| decision | abbreviation | prompt file | yes / no labels | threshold may flip it | the view asks |\n"
          "|----------|--------------|-------------|-----------------|-----------------------|---------------|")


def render(registry=None) -> str:
    """One row per decision of `registry` (the shipped one by default), in its order."""
    if registry is None:
        checkout_first()
        from judge.judging.decisions import REGISTRY as registry
    rows = [f"| `{spec.name}` | `{spec.abbreviation}` | `prompts/{spec.prompt}.md` | {' / '.join(spec.labels)} | "
            f"{'yes' if spec.takes_threshold else 'no'} | {spec.question} |" for spec in registry]
    return "\n".join([HEADER, *rows])


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (MkDocs' hook signature)
    return insert_section(markdown, page, PAGE, MARKER, "decision table", render)
