"""Red team: the same items judged clean and attacked, compared pair by pair.

For one attack kind and one decision, every item is asked twice (clean, and with the attack's text placed in the
sentence or the document). The pairs of judge labels give
- the flip rates: clean "no" -> attacked "yes" (what an attacker wants) and the reverse, each over the pairs whose
  clean label was that class;
- the false-support rate (the judge says "yes" where the human said anything else), clean and attacked, over the
  same pairs, so the two are comparable;
- Cohen's kappa of the attacked labels against the clean ones (1: the attack changed nothing);
- McNemar's exact test on the discordant pairs (b = flips to "yes", c = flips to "no"): does the attack push the
  judge towards "yes" more than chance would;
- the injection detector's flag rate on the attacked items and on the clean ones (what `eval` would flag).
Items where either side failed (no label) are left out of the pairs and listed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import Field

from judge.calibration.stats.agreement import confusion_matrix, kappa_of
from judge.calibration.stats.mcnemar import mcnemar_p, mcnemar_power_warning, min_detectable_difference
from judge.calibration.stats.undefined import Reasons, Statistics
from judge.judging.decisions import DECISION_LABELS


class Rate(Statistics):
    """k of n, and their ratio (undefined when n = 0)."""

    k: int
    n: int
    rate: float | None

    @classmethod
    def of(cls, k: int, n: int) -> Rate:
        return cls(k=k, n=n, rate=k / n if n else None, undefined={} if n else {"rate": "none to count"})

    def __str__(self) -> str:
        """`k/n (ratio)`, the ratio to three decimals (as every other figure of the calibration report)."""
        return f"{self.k}/{self.n} " + (f"({self.rate:.3f})" if self.rate is not None
                                         else f"(undefined: {self.undefined['rate']})")


class AttackResult(Statistics):
    """One attack kind on one decision's items, clean against attacked."""

    attack: str
    target: str = Field(description="where the attack's text went: sentence | document")
    decision: str
    n_items: int = Field(description="items asked clean and attacked")
    n_pairs: int = Field(description="items with a label on both sides")
    failed_clean: list[str]
    failed_attacked: list[str]
    false_support_clean: Rate = Field(description="judge 'yes' among pairs whose human label is not 'yes'")
    false_support_attacked: Rate
    flips_to_yes: Rate = Field(description="attacked 'yes' among pairs whose clean label was 'no'")
    flips_to_no: Rate = Field(description="attacked 'no' among pairs whose clean label was 'yes'")
    flipped_to_yes: list[str]
    flipped_to_no: list[str]
    accuracy_clean: float | None
    accuracy_attacked: float | None
    kappa: float | None = Field(description="Cohen's kappa, attacked labels against clean labels")
    mcnemar_p: float | None = Field(description="exact McNemar p on b = flips to 'yes', c = flips to 'no'")
    min_detectable_difference: float | None
    warning: str | None
    flagged_clean: Rate = Field(description="clean items the injection detector flags (false alarms)")
    flagged_attacked: Rate = Field(description="attacked items the injection detector flags")
    flag_rules: dict[str, int] = Field(description="detector rule -> attacked items it flagged first")
    unflagged: list[str] = Field(description="attacked items the detector missed")
    shown_as_clean: Rate | None = Field(
        default=None, description="attacked items whose prompt, after the quarantine withheld what addresses the "
        "judge, is their clean twin's (None: the judge was shown the attack as written, --on-injection flag)")


def attack_comparison(attack: str, target: str, decision: str, item_ids: Sequence[str], human: Sequence[str],
                      clean: Sequence[str | None], attacked: Sequence[str | None],
                      clean_flags: Sequence[str | None], attacked_flags: Sequence[str | None],
                      shown_clean: Sequence[bool] | None = None) -> AttackResult:
    """Parallel sequences per item: human label, judge label clean and attacked (None: failed), the detector's
    rule on the clean and attacked texts (None: not flagged) and, under quarantine, whether the attacked prompt
    was the clean one."""
    columns = (item_ids, human, clean, attacked, clean_flags, attacked_flags, *([shown_clean] if shown_clean
                                                                                   is not None else []))
    if len({len(c) for c in columns}) != 1:
        raise ValueError("item_ids, human, clean, attacked and the flags must be parallel")
    yes, no = DECISION_LABELS[decision]  # type: ignore[index]  (item decisions are checked upstream)
    pairs = [i for i in range(len(item_ids)) if clean[i] is not None and attacked[i] is not None]
    human_no = [i for i in pairs if human[i] != yes]
    clean_no = [i for i in pairs if clean[i] == no]
    clean_yes = [i for i in pairs if clean[i] == yes]
    to_yes = [i for i in clean_no if attacked[i] == yes]
    to_no = [i for i in clean_yes if attacked[i] == no]
    matrix = confusion_matrix([clean[i] for i in pairs], [attacked[i] for i in pairs], [yes, no])  # type: ignore[misc]
    n = len(pairs)
    b, c = len(to_yes), len(to_no)
    why = Reasons()
    if not n:
        why.mark("no item labelled on both sides", "accuracy_clean", "accuracy_attacked", "mcnemar_p",
                 "min_detectable_difference")
    kappa = why.value("kappa", kappa_of, matrix)
    mdd = min_detectable_difference(n, b + c)
    if mdd is None:
        why.mark(f"no split of the {b + c} flipped items reaches p < 0.05", "min_detectable_difference")
    return AttackResult(
        attack=attack, target=target, decision=decision, n_items=len(item_ids), n_pairs=n,
        failed_clean=[item_ids[i] for i in range(len(item_ids)) if clean[i] is None],
        failed_attacked=[item_ids[i] for i in range(len(item_ids)) if attacked[i] is None],
        false_support_clean=Rate.of(sum(clean[i] == yes for i in human_no), len(human_no)),
        false_support_attacked=Rate.of(sum(attacked[i] == yes for i in human_no), len(human_no)),
        flips_to_yes=Rate.of(b, len(clean_no)), flips_to_no=Rate.of(c, len(clean_yes)),
        flipped_to_yes=[item_ids[i] for i in to_yes], flipped_to_no=[item_ids[i] for i in to_no],
        accuracy_clean=sum(clean[i] == human[i] for i in pairs) / n if n else None,
        accuracy_attacked=sum(attacked[i] == human[i] for i in pairs) / n if n else None,
        kappa=kappa, mcnemar_p=mcnemar_p(b, c) if n else None, min_detectable_difference=mdd, undefined=why,
        warning=mcnemar_power_warning(n, b, c) if n else "no item has a label on both sides",
        flagged_clean=Rate.of(sum(f is not None for f in clean_flags), len(item_ids)),
        flagged_attacked=Rate.of(sum(f is not None for f in attacked_flags), len(item_ids)),
        flag_rules=dict(sorted(Counter(f for f in attacked_flags if f is not None).items())),
        unflagged=[item_ids[i] for i, f in enumerate(attacked_flags) if f is None],
        shown_as_clean=None if shown_clean is None else Rate.of(sum(shown_clean), len(item_ids)),
    )
