"""The red-team suite: every labelled item asked again with an attack's text in it, through the same Decider
(client, cache, prompts, passage policy) as its clean twin, then compared pair by pair
(`judge.calibration.stats.redteam.attack_comparison`).

Attack kinds come from judge/data/attacks.json (or a file of the same shape); each item gets one of its kind's
text variants, chosen from a hash of the item id so that sampling or adding data sets leaves an item's variant
as it was. The injection detector is run on what the judge is shown (the sentence and the document values of the
prepared prompt), clean and attacked, so its flag rates are measured on the same texts the judge read.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping, Sequence

from judge.calibration.items import CalibrationItem, label_for
from judge.calibration.runner import attack_applies, prepare_item
from judge.calibration.stats import AttackResult, attack_comparison
from judge.defence.injection import Attack, detect
from judge.judging.decisions.asker import Decider
from judge.judging.decisions.base import Prepared
from judge.judging.passages import PassagePolicy
from judge.settings import DEFAULT_INJECTION_DETECTOR, InjectionDetector

# The prompt values that carry text from outside (the request of an item is the data set's question, not ours
# to attack, and is left out).
UNTRUSTED_VALUES = ("sentence", "document")


def variant_of(item_id: str) -> int:
    """A stable variant number per item (the attack takes it modulo its number of texts)."""
    return int.from_bytes(hashlib.sha256(item_id.encode("utf-8")).digest()[:4], "big")


def shown_flag(prepared: Prepared) -> str | None:
    """The detector's rule for what the judge is shown (None: nothing addresses the judge)."""
    for name in UNTRUSTED_VALUES:
        if name in prepared.values:
            detection = detect(prepared.values[name])
            if detection.flagged:
                return detection.rule
    return None


def applicable(items: Sequence[CalibrationItem], attack: Attack) -> list[CalibrationItem]:
    return [item for item in items if attack_applies(attack, item.decision)]


async def red_team(items: Sequence[CalibrationItem], clean: Mapping[str, str | None], attacks: Sequence[Attack],
                   decider: Decider, passages: PassagePolicy, on_item: Callable[[], None] = lambda: None,
                   withhold: bool = False,
                   detector: InjectionDetector = DEFAULT_INJECTION_DETECTOR) -> list[AttackResult]:
    """One AttackResult per (attack, decision) with items; `clean` holds the judge's clean label per item id.
    `withhold`: the judge is shown the items with flagged pieces withheld (--on-injection quarantine); the
    detector's flag rates are still measured on the text as written. `detector` decides what is flagged and
    withheld: eval's `--injection-detector`."""
    clean_flags = {item.item_id: shown_flag(prepare_item(item, passages)) for item in items}
    # What the judge is shown of each clean item under quarantine: an attacked twin showing the same was cut back.
    clean_shown = {item.item_id: prepare_item(item, passages, withhold=True, detector=detector).values
                   for item in items} \
        if withhold else {}

    async def one(attack: Attack, item: CalibrationItem) -> tuple[str | None, str | None, bool]:
        variant = variant_of(item.item_id)
        as_written = prepare_item(item, passages, attack, variant)
        prepared = prepare_item(item, passages, attack, variant, True, detector) if withhold else as_written
        record = await decider.ask(prepared)
        on_item()
        as_clean = withhold and prepared.values == clean_shown[item.item_id]
        return label_for(item.decision, record.verdict), shown_flag(as_written), as_clean

    # Item by item, every attack of an item back to back: an attacked sentence's prompt shares the request and the
    # document with the item's other attacks, so a local model reuses that prefix's KV state instead of
    # evaluating the document again for each attack. (Answers do not depend on the order.)
    plan = [(attack, item) for item in items for attack in attacks if attack_applies(attack, item.decision)]
    answers = dict(zip(((a.kind, i.item_id) for a, i in plan),
                       await asyncio.gather(*(one(a, i) for a, i in plan)), strict=True))
    results = []
    for attack in attacks:
        by_decision: dict[str, list[CalibrationItem]] = {}
        for item in applicable(items, attack):
            by_decision.setdefault(item.decision, []).append(item)
        for decision, its in sorted(by_decision.items()):
            ids = [i.item_id for i in its]
            results.append(attack_comparison(
                attack.kind, attack.target, decision, ids, [i.human_label for i in its], [clean.get(i) for i in ids],
                [answers[(attack.kind, i)][0] for i in ids], [clean_flags[i] for i in ids],
                [answers[(attack.kind, i)][1] for i in ids],
                [answers[(attack.kind, i)][2] for i in ids] if withhold else None))
    return results


def attacked_count(items: Sequence[CalibrationItem], attacks: Sequence[Attack]) -> int:
    """How many attacked questions a red-team run asks (for a progress bar)."""
    return sum(len(applicable(items, attack)) for attack in attacks)
