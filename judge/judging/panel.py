"""A panel of judges: every judge answers every decision, and a vote per decision gives the record the flowchart
follows. Each judge's own record is kept in the voted record's `panel` list.

Each judge is a `Decider` of its own (its own client, hence its own model, server and cache entries, and its own
prompt directory and thresholds); the panel asks them at once and votes. The cache key holds the model and the
prompt, so each judge's answer is one cache entry: a panel that gains a judge asks only that judge.

The vote (`majority`, `unanimous`, `any`) is over each decision's positive verdict:
- a decision with a yes/no verdict (supports_citation, needs_citation, claims_absence, repeated_claim): its yes
  (supported, needs a citation, claims an absence, repeats an earlier claim) is the positive verdict;
- answers_nugget: each answer a judge matched is voted on by itself (the panel earns an answer when the vote
  carries it) and the panel's verdict is whether it earns any;
- absence_nugget: likewise for each recorded absence a judge named (a judge answering "none" names none).

Judges that could not decide (they said "cannot judge", or every retry failed) abstain. `majority`: the positive
verdict wins with more than half of the verdicts given; a tie is not a majority, so it gives the negative verdict.
`unanimous`: the positive verdict wins only if every judge of the panel gives it (an abstention blocks it).
`any`: the positive verdict wins if any judge gives it. When no judge gives a verdict, the panel has none either
(and its `error` names each judge's failure).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from typing import Any

from judge.errors import SettingError
from judge.formats.judgments import DecisionRecord, EarnedAnswer
from judge.judging import decisions
from judge.judging.decisions.asker import AsksModels, Decider
from judge.judging.decisions.base import Prepared
from judge.judging.thresholds import resolve_thresholds
from judge.labels import DEFAULT_VOTE, VOTES, Vote
from judge.llm.cache.store import DecisionCache
from judge.llm.client import DecisionClient, Usage
from judge.llm.panel import PanelMember, check_panel
from judge.settings import JudgeSettings, ModelSettings, RetryPolicy, Thresholds


def check_vote(vote: str) -> Vote:
    """`vote` if it is one of VOTES; SettingError naming the choices otherwise."""
    if vote not in VOTES:
        raise SettingError(f"vote: {vote!r} is not a vote; choose {', '.join(VOTES)}")
    return vote  # type: ignore[return-value]


def carried(positive: int, negative: int, judges: int, vote: Vote) -> bool:
    """Whether the positive verdict wins, given how many judges gave it, how many gave the negative one, and how
    many judges the panel has (the others abstained)."""
    if vote == "any":
        return positive > 0
    if vote == "unanimous":
        return positive == judges
    return positive > negative  # majority of the verdicts given; a tie is not a majority


def by_answers(decision: str) -> bool:
    """Whether a decision's positive verdict is a set of earned answers (no single verdict field)."""
    return decisions.REGISTRY[decision].response_model.verdict_field is None


def vote_on(records: Sequence[DecisionRecord], vote: Vote) -> tuple[bool | None, list[EarnedAnswer]]:
    """The panel's verdict and earned answers from its judges' records (one per judge, in the panel's order)."""
    given = [r for r in records if r.verdict is not None]
    if not given:
        return None, []
    decision = records[0].decision
    if not by_answers(decision):
        positive = sum(r.verdict is True for r in given)
        return carried(positive, len(given) - positive, len(records), vote), []
    named: dict[EarnedAnswer, int] = {}
    for record in given:
        for answer in dict.fromkeys(record.matches):
            named[answer] = named.get(answer, 0) + 1
    earned = [a for a, n in named.items() if carried(n, len(given) - n, len(records), vote)]
    return bool(earned), earned


def panel_record(records: Sequence[DecisionRecord], vote: Vote, name: str) -> DecisionRecord:
    """The record the flowchart follows: the vote's verdict and answers, the judges' records in `panel`. Its
    rationale and evidence are those of the first judge whose verdict the vote agrees with (the first judge's
    when none does); `cached` when every judge's answer came from the cache."""
    verdict, earned = vote_on(records, vote)
    speaker = next((r for r in records if verdict is not None and r.verdict == verdict), records[0])
    failed = [r for r in records if r.verdict is None and r.error]
    error = None
    if verdict is None and len(failed) == len(records):
        error = "every judge of the panel failed: " + "; ".join(f"{r.judge}: {r.error}" for r in failed)
    return DecisionRecord(
        decision=records[0].decision, verdict=verdict, doc_ids=list(records[0].doc_ids), matches=earned,
        rationale=speaker.rationale, evidence=speaker.evidence, evidence_numbers=list(speaker.evidence_numbers),
        judge=name, cached=all(r.cached for r in records), error=error, shown=speaker.shown,
        missing_doc_ids=list(records[0].missing_doc_ids), panel=[r.model_copy(update={"panel": None})
                                                                 for r in records])


class _MemberDecider(Decider):
    """A panel member's Decider: its records name the member (model@prompt directory), not only the model."""

    def __init__(self, client: AsksModels, member: PanelMember, thresholds: Thresholds | None):
        super().__init__(client, member.prompts_dir, thresholds)
        self.member = member

    @property
    def judge(self) -> str:
        return self.member.name


class PanelDecider:
    """Asks every judge of a panel the same prepared decision at once and records their vote (see the module
    docstring). `clients`: one per member, in the panel's order (judge.llm.client.DecisionClient, or any client
    a Decider takes); `thresholds`: each member's resolved thresholds (None: none)."""

    def __init__(self, members: Sequence[PanelMember], clients: Sequence[AsksModels], vote: str = DEFAULT_VOTE,
                 thresholds: Sequence[Thresholds | None] | None = None):
        self.members = check_panel(members)
        self.vote = check_vote(vote)
        if len(clients) != len(self.members):
            raise ValueError(f"a panel of {len(self.members)} judges needs as many clients, not {len(clients)}")
        rules = list(thresholds) if thresholds is not None else [None] * len(self.members)
        self.clients = list(clients)
        self.deciders = [_MemberDecider(c, m, t) for c, m, t in zip(clients, self.members, rules, strict=True)]

    @property
    def judge(self) -> str:
        """The panel's name in records and judgments: `panel:<vote>:<judge>+<judge>...`."""
        return f"panel:{self.vote}:" + "+".join(m.name for m in self.members)

    @property
    def settings(self) -> ModelSettings:
        """The first judge's model settings (what a walker reads of its client's)."""
        return self.members[0].model

    @property
    def prompts_dir(self) -> Any:
        return self.members[0].prompts_dir

    async def ask(self, prepared: Prepared) -> DecisionRecord:
        records = await asyncio.gather(*(d.ask(prepared) for d in self.deciders))
        return panel_record(records, self.vote, self.judge)

    @property
    def usage(self) -> Usage:
        """The judges' usage summed (a snapshot). A judge whose server was given up on stops the panel: `stopped`
        names that judge."""
        total = Usage()
        for member, client in zip(self.members, self.clients, strict=True):
            part: Usage | None = getattr(client, "usage", None)
            if part is None:
                continue
            for field in fields(Usage):
                name = field.name
                if name == "cost_known":
                    total.cost_known = total.cost_known and part.cost_known
                elif name == "stopped":
                    if part.stopped and not total.stopped:
                        total.stopped = f"panel judge {member.name}: {part.stopped}"
                else:
                    setattr(total, name, getattr(total, name) + getattr(part, name))
        return total

    def embedded_report(self) -> tuple[dict[str, Any] | None, list[str]]:
        """The embedded judge's kernels and events (judge.llm.client.DecisionClient.embedded_report), of the first
        member that has them."""
        kernels, events = None, []
        for member, client in zip(self.members, self.clients, strict=True):
            report = getattr(client, "embedded_report", None)
            if report is None:
                continue
            part_kernels, part_events = report()
            kernels = kernels or part_kernels
            events += [f"{member.name}: {e}" for e in part_events]
        return kernels, events


def member_thresholds(member: PanelMember, judge: JudgeSettings) -> Thresholds | None:
    """The thresholds a judge of the panel applies: as a single judge of that model and prompt directory would
    (the shipped rules only for the embedded judge with the shipped prompts; rules given explicitly, to every
    judge)."""
    return resolve_thresholds(member.model, replace(judge, prompts_dir=member.prompts_dir)).thresholds


def open_panel(members: Sequence[PanelMember], vote: str, judge: JudgeSettings, cache: DecisionCache | None, *,
               concurrency: int = 4, retry: RetryPolicy = RetryPolicy(), max_cost: float | None = None,
               price_per_1k: float | None = None, on_decision: Callable[[bool], None] | None = None
               ) -> PanelDecider:
    """A panel ready to ask: one DecisionClient per judge (its own model and server, the run's cache, up to
    `concurrency` decisions in flight each), each judge's thresholds (`member_thresholds`). `max_cost` is shared
    out equally: each of the n judges refuses to spend past max_cost / n, so the panel never passes it."""
    members = check_panel(members)
    share = None if max_cost is None else max_cost / len(members)
    clients = [DecisionClient(m.model, cache, concurrency=concurrency, retry=retry, max_cost=share,
                              price_per_1k=price_per_1k, on_decision=on_decision) for m in members]
    return PanelDecider(members, clients, vote, [member_thresholds(m, judge) for m in members])
