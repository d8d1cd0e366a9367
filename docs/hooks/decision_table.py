"""MkDocs hook: the tables of the judge's decisions in docs/decisions.md, generated from the decision registries at
build time (judge.judging.decisions.REGISTRY, the flowchart's diamonds in the order of its rows, and
NUGGET_REGISTRY, the questions of nugget creation and pooling: each decision module's `DECISION` declaration), so
a new decision appears in them without an edit to the page. The page holds the markers below where the tables go;
a page without them fails the build.
"""

from __future__ import annotations

from generated_section import checkout_first, insert_section

MARKER = "<!-- decision-table -->"
NUGGET_MARKER = "<!-- nugget-decision-table -->"
PAGE = "decisions.md"
HEADER = ("| decision | abbreviation | prompt file | yes / no labels | threshold may flip it | the view asks |\n"
          "|----------|--------------|-------------|-----------------|-----------------------|---------------|")


def render(registry=None) -> str:
    """One row per decision of `registry` (the flowchart's by default), in its order."""
    if registry is None:
        checkout_first()
        from judge.judging.decisions import REGISTRY as registry
    rows = [f"| `{spec.name}` | `{spec.abbreviation}` | `prompts/{spec.prompt}.md` | {' / '.join(spec.labels)} | "
            f"{'yes' if spec.takes_threshold else 'no'} | {spec.question} |" for spec in registry]
    return "\n".join([HEADER, *rows])


def render_nuggets() -> str:
    """The same table for the questions nugget creation and pooling ask."""
    checkout_first()
    from judge.judging.decisions import NUGGET_REGISTRY

    return render(NUGGET_REGISTRY)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (MkDocs' hook signature)
    markdown = insert_section(markdown, page, PAGE, MARKER, "decision table", render)
    return insert_section(markdown, page, PAGE, NUGGET_MARKER, "table of nugget decisions", render_nuggets)
