"""The ARGUE flowchart (Mayfield et al., SIGIR 2024, Figure 2), declared once as a table.

`CHART` has a `Diamond` row per decision the judge is asked (what it is asked about, where each answer leads:
another diamond or a leaf, and how the docs say it) and a `Leaf` row per outcome (its number, name, value to
sentence precision and label). Everything else is derived from these rows: the decision names the rest of the package
imports (the constants below), `Outcome` and its values, the precision sets, the walk of judge.judging.flowchart
(for the model, for recorded decisions and for Auto-ARGUE's judgments), the order of the decision registry and of
the signature's `prompts:` field (the order of the rows), the fake judge's answer to a decision it has no rule for
(`unasked`) and the diagram and outcome table of docs/judging.md (docs/hooks/flowchart_table.py).

A decision that routes sentences to a new leaf is its module in judge/judging/decisions/, its prompt in prompts/,
and here: its name, its row, its leaf, and the edge of an existing row that now leads to it (docs/decisions.md).

Kernel: imports nothing of the package, so every floor may read it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Literal

# The decisions, by the name their records carry (`DecisionRecord.decision`), their module and prompt file bear.
SUPPORTS_CITATION = "supports_citation"  # does a cited document support the sentence?
ANSWERS_NUGGET = "answers_nugget"        # which candidate nugget answers does it state?
CLAIMS_ABSENCE = "claims_absence"        # does an uncited sentence claim some information is absent?
ABSENCE_NUGGET = "absence_nugget"        # which absence nugget (if any) confirms that claim?
NEEDS_CITATION = "needs_citation"        # does an uncited sentence state something that needs a citation?
REPEATED_CLAIM = "repeated_claim"        # is it stated earlier, or a lead-in/summary of cited sentences?
# The questions nugget creation and pooling ask (judge.nuggets), outside the flowchart: declared and asked as the
# diamonds' are (judge.judging.decisions.NUGGET_REGISTRY), never walked.
DOCUMENT_RELEVANCE = "document_relevance"  # how useful is a document for a report on the request?
DRAFT_NUGGETS = "draft_nuggets"            # which nugget questions does a document answer, and how?
ANSWERS_QUESTION = "answers_question"      # which bank questions does a report sentence answer, and how?
NUGGET_QUESTIONS: tuple[str, ...] = (DOCUMENT_RELEVANCE, DRAFT_NUGGETS, ANSWERS_QUESTION)


class Value(str, Enum):
    """What an outcome is worth to sentence precision."""

    POSITIVE = "+"
    NEGATIVE = "-"
    NEUTRAL = "0"


# Where an answer leads: a diamond (its decision's name) or a leaf (its outcome number).
Target = str | int
# What a diamond is asked about: the sentence alone; each of its cited documents (policy `joint`: all of them in one
# question), the verdict being the citation policy's over their answers; or the documents the previous "cited"
# diamond said yes to.
About = Literal["sentence", "cited", "supporting"]


@dataclass(frozen=True)
class Diamond:
    """One decision of the flowchart and where its answers lead."""

    decision: str
    yes: Target
    no: Target
    says: tuple[str, str]            # the yes / no edge as docs/judging.md writes a path ("supported", ...)
    about: About = "sentence"
    none: Target | None = None       # where "nothing to ask" leads (no candidate nugget); None: always asked
    none_says: str = ""
    earns: bool = False              # its yes-leaf earns the nuggets its record matched (EarnedAnswer)
    # The answer taken for a judge that does not ask this decision: the fake judge without a rule for it
    # (judge.testing.responders), an Auto-ARGUE judgments file (judge.adapters.autoargue). None: such a judge
    # cannot reach an outcome through it.
    unasked: Literal["yes", "no"] | None = None

    @property
    def per_document(self) -> bool:
        """Asked once per cited document: a recorded one is found by its documents."""
        return self.about == "cited"

    @property
    def optional(self) -> bool:
        """May have nothing to ask; the walk then goes on without a record."""
        return self.none is not None

    def edges(self) -> Iterator[tuple[str, Target, str]]:
        """(answer, target, how the docs say it): yes, no and, for an optional diamond, "nothing to ask"."""
        yield "yes", self.yes, self.says[0]
        yield "no", self.no, self.says[1]
        if self.none is not None:
            yield "none", self.none, self.none_says


@dataclass(frozen=True)
class Leaf:
    """One outcome: its number, its name in `Outcome`, its value and its short label (the view, the docs)."""

    number: int
    name: str
    value: Value
    label: str


@dataclass(frozen=True)
class Chart:
    """The flowchart: where a cited and an uncited sentence start, the diamonds (in the order of the decision
    registry and the signature) and the leaves; a penalised sentence (`--on-injection penalise`) lands on
    `penalised` (cited, uncited) without a question. Checked when built: every target exists, every row is
    reachable, no path loops, leaves are numbered 1..n."""

    cited: str
    uncited: str
    diamonds: tuple[Diamond, ...]
    leaves: tuple[Leaf, ...]
    penalised: tuple[int, int]
    start_says: tuple[str, str] = ("has citation", "no citation")

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise ValueError("the flowchart table is inconsistent: " + "; ".join(problems))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.decision for d in self.diamonds)

    def diamond(self, decision: str) -> Diamond:
        for diamond in self.diamonds:
            if diamond.decision == decision:
                return diamond
        raise KeyError(f"{decision!r} is not a diamond of the flowchart; known: {', '.join(self.names)}")

    def leaf(self, number: int) -> Leaf:
        for leaf in self.leaves:
            if leaf.number == number:
                return leaf
        raise KeyError(f"#{number} is not an outcome of the flowchart")

    def start(self, cited: bool) -> str:
        return self.cited if cited else self.uncited

    def leaves_below(self, target: Target) -> frozenset[int]:
        """The outcomes reachable from `target` (a diamond or a leaf)."""
        if isinstance(target, int):
            return frozenset({target})
        return frozenset(n for _, t, _ in self.diamond(target).edges() for n in self.leaves_below(t))

    def paths(self) -> list[tuple[int, list[tuple[str, str, str]]]]:
        """Every path from a start to a leaf, as (leaf, [(decision or "cited", answer, how the docs say it)]),
        depth first, yes before no before "nothing to ask", cited sentences first."""
        found: list[tuple[int, list[tuple[str, str, str]]]] = []

        def down(target: Target, steps: list[tuple[str, str, str]]) -> None:
            if isinstance(target, int):
                found.append((target, steps))
                return
            for answer, to, says in self.diamond(target).edges():
                down(to, [*steps, (target, answer, says)])

        down(self.cited, [("cited", "yes", self.start_says[0])])
        down(self.uncited, [("cited", "no", self.start_says[1])])
        return found


def _problems(chart: Chart) -> list[str]:
    problems = []
    names = [d.decision for d in chart.diamonds]
    numbers = [leaf.number for leaf in chart.leaves]
    for kind, values in (("decision", names), ("leaf number", numbers), ("leaf name", [x.name for x in chart.leaves])):
        problems += [f"two rows share the {kind} {v!r}" for v in sorted({v for v in values if values.count(v) > 1},
                                                                         key=str)]
    if sorted(numbers) != list(range(1, len(numbers) + 1)):
        problems.append(f"leaves are numbered {sorted(numbers)}, not 1..{len(numbers)}")
    for diamond in chart.diamonds:
        for answer, target, _ in diamond.edges():
            if target not in (names if isinstance(target, str) else numbers):
                problems.append(f"{diamond.decision}'s {answer} leads to {target!r}, which is no row")
        if diamond.about == "cited" and diamond.none is not None:
            problems.append(f"{diamond.decision} is asked of each cited document, so it cannot have nothing to ask")
    for start in (chart.cited, chart.uncited):
        if start not in names:
            problems.append(f"the walk starts at {start!r}, which is no row")
    cited = next((d for d in chart.diamonds if d.decision == chart.cited), None)
    if cited is not None and cited.about != "cited":
        problems.append(f"the cited branch starts at {chart.cited}, which is not asked of the cited documents")
    if problems:
        return problems
    seen: set[Target] = set()

    def visit(target: Target, path: tuple[str, ...]) -> None:
        if isinstance(target, str) and target in path:
            problems.append(f"the path {' -> '.join((*path, target))} loops")
            return
        seen.add(target)
        if isinstance(target, str):
            for _, to, _ in chart.diamond(target).edges():
                visit(to, (*path, target))

    visit(chart.cited, ())
    visit(chart.uncited, ())
    problems += [f"no path reaches {'the diamond ' + repr(t) if isinstance(t, str) else f'#{t}'}"
                 for t in [*names, *numbers] if t not in seen]
    problems += [f"a penalised sentence lands on #{n}, which is no leaf" for n in chart.penalised if n not in numbers]
    return problems


CHART = Chart(
    cited=SUPPORTS_CITATION,
    uncited=CLAIMS_ABSENCE,
    diamonds=(
        Diamond(SUPPORTS_CITATION, about="cited", yes=ANSWERS_NUGGET, no=1,
                says=("supported", "a cited document does not support the sentence")),
        Diamond(ANSWERS_NUGGET, about="supporting", yes=3, no=2, none=2, earns=True,
                says=("answers ≥1 nugget attested by a cited document",
                      "answers no nugget attested by a cited document"),
                none_says="no nugget answer is attested by a supporting document"),
        Diamond(CLAIMS_ABSENCE, yes=ABSENCE_NUGGET, no=NEEDS_CITATION,
                says=("claims that some information is absent", "claims no absence")),
        Diamond(ABSENCE_NUGGET, yes=8, no=7, none=7, earns=True,
                says=("an absence nugget confirms it", "no absence nugget confirms it"),
                none_says="the request has no absence nugget"),
        Diamond(NEEDS_CITATION, yes=REPEATED_CLAIM, no=4,
                says=("needs a citation", "needs no citation (intro, transition, restating the request)")),
        Diamond(REPEATED_CLAIM, yes=6, no=5,
                says=("repeats an earlier sentence, or leads into / sums up a cited sentence", "its claim is new")),
    ),
    leaves=(
        Leaf(1, "UNSUPPORTED_CITATION", Value.NEGATIVE, "cited, not supported"),
        Leaf(2, "SUPPORTED_NO_NUGGET", Value.NEUTRAL, "supported, answers no nugget"),
        Leaf(3, "SUPPORTED_NUGGET", Value.POSITIVE, "supported, answers a nugget"),
        Leaf(4, "NO_CITATION_NEEDED", Value.NEUTRAL, "needs no citation"),
        Leaf(5, "UNCITED_NEW_CLAIM", Value.NEGATIVE, "uncited new claim"),
        Leaf(6, "UNCITED_REPEATED_CLAIM", Value.NEUTRAL, "uncited repeat or summary"),
        Leaf(7, "ABSENCE_NOT_NUGGET", Value.NEGATIVE, "absence claim, not a nugget"),
        Leaf(8, "ABSENCE_NUGGET", Value.POSITIVE, "absence confirmed by a nugget"),
    ),
    penalised=(1, 5),
)

# -- derived ----------------------------------------------------------------------------------------------------

# The decisions the flowchart asks, in the order of its rows (the registry's and the signature's).
DIAMONDS: tuple[str, ...] = CHART.names

# The leaves of the flowchart, by number (an int is an Outcome of that number: records store the number).
_LEAVES = sorted(CHART.leaves, key=lambda leaf: leaf.number)
Outcome = IntEnum("Outcome", [(leaf.name, leaf.number) for leaf in _LEAVES], module=__name__, qualname="Outcome")
Outcome.__doc__ = "The leaves of the ARGUE flowchart (judge.chart.CHART's LEAVES), by number."

OUTCOME_VALUE: dict[Outcome, Value] = {Outcome(leaf.number): leaf.value for leaf in _LEAVES}
OUTCOME_LABEL: dict[int, str] = {leaf.number: leaf.label for leaf in _LEAVES}

# Sentence precision (ARGUE): positives over everything that is not neutral.
PRECISION_NUMERATOR = frozenset(o for o, v in OUTCOME_VALUE.items() if v is Value.POSITIVE)
PRECISION_DENOMINATOR = frozenset(o for o, v in OUTCOME_VALUE.items() if v is not Value.NEUTRAL)

# The outcomes of cited sentences, and of those whose citations support them (the cited start's yes).
CITED_OUTCOMES = tuple(Outcome(n) for n in sorted(CHART.leaves_below(CHART.cited)))
SUPPORTED_OUTCOMES = tuple(Outcome(n) for n in sorted(CHART.leaves_below(CHART.diamond(CHART.cited).yes)))


def outcome_list(outcomes: frozenset[Outcome] | tuple[Outcome, ...]) -> str:
    """`1, 3, 5, 7 or 8`: outcomes as a warning names them."""
    numbers = [str(int(o)) for o in sorted(outcomes)]
    return numbers[0] if len(numbers) == 1 else f"{', '.join(numbers[:-1])} or {numbers[-1]}"
