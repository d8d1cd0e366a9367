"""MkDocs hook: the flowchart of docs/judging.md (a diagram and the table of outcomes), generated at build time from
the flowchart's table (judge.chart.CHART), with each diamond's question from its decision module
(judge.judging.decisions.REGISTRY), so a new diamond or leaf appears without an edit to the page. The page holds
the marker below where they go; a page without it fails the build.
"""

from __future__ import annotations

from generated_section import checkout_first, insert_section

MARKER = "<!-- flowchart -->"
PAGE = "judging.md"
SYMBOL = {"+": "+", "-": "\u2212", "0": "0"}   # the value as the pages print it (a real minus sign)
ANSWER = {"yes": "yes", "no": "no", "none": "nothing to ask"}
ABOUT = {"cited": " (asked of each cited document)", "supporting": " (about the supporting documents)",
         "sentence": ""}


def render(chart=None, registry=None) -> str:
    """The diagram (a tree from both starts, yes before no before "nothing to ask") and one table row per outcome
    with its value and every path that reaches it."""
    if chart is None or registry is None:
        checkout_first()
        from judge.chart import CHART
        from judge.judging.decisions import REGISTRY
        chart, registry = chart or CHART, registry or REGISTRY
    lines = ["```text", "cited?"]

    def branch(target, prefix: str) -> None:
        diamond = chart.diamond(target)
        edges = list(diamond.edges())
        for position, (answer, to, _) in enumerate(edges):
            last = position == len(edges) - 1
            lines.append(f"{prefix}{'└' if last else '├'}─ {ANSWER[answer]} ─► {node(to)}")
            if isinstance(to, str):
                branch(to, prefix + ("     " if last else "│    "))

    def node(target) -> str:
        if isinstance(target, int):
            leaf = chart.leaf(target)
            return f"#{leaf.number} ({SYMBOL[leaf.value.value]}) {leaf.label}"
        return f"{target}: {registry[target].question}{ABOUT[chart.diamond(target).about]}"

    for position, (start, answer) in enumerate(((chart.cited, "yes"), (chart.uncited, "no"))):
        last = position == 1
        lines.append(f"{'└' if last else '├'}─ {answer} ─► {node(start)}")
        branch(start, "     " if last else "│    ")
    lines += ["```", "", "| # | outcome | value | path |", "|---|---------|-------|------|"]
    paths: dict[int, list[str]] = {}
    for number, steps in chart.paths():
        paths.setdefault(number, []).append("; ".join(says for _, _, says in steps))
    for leaf in sorted(chart.leaves, key=lambda x: x.number):
        lines.append(f"| {leaf.number} | {leaf.label} | {SYMBOL[leaf.value.value]} | "
                     f"{'<br>or: '.join(paths[leaf.number])} |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (MkDocs' hook signature)
    return insert_section(markdown, page, PAGE, MARKER, "flowchart", render)
