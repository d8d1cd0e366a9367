"""Prompt A/B: McNemar's exact test on paired right/wrong outcomes, with a warning when it has too little power."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, Field
from scipy import stats as sps

from judge.calibration.items import CalibrationItem
from judge.calibration.stats.undefined import Reasons, Statistics

MIN_DISCORDANT = 10  # rule of thumb below which the warning fires even if significance is reachable


class McNemarResult(Statistics):
    """p and the accuracies are undefined without a compared item; the minimum detectable difference where no
    split of the discordant items reaches p < alpha."""

    n: int
    both_right: int
    b: int = Field(description="A right, B wrong")
    c: int = Field(description="A wrong, B right")
    both_wrong: int
    p_value: float | None = Field(description="exact McNemar p (1 when no item is discordant)")
    accuracy_a: float | None
    accuracy_b: float | None
    min_detectable_difference: float | None = Field(
        description="smallest |acc_A - acc_B| that would reach p < alpha with b + c discordant items out of n")
    warning: str | None


def mcnemar_p(b: int, c: int) -> float:
    """Exact McNemar p: two-sided binomial test of min(b, c) successes in b + c trials at 0.5; 1 if b + c = 0."""
    if b + c == 0:
        return 1.0
    return float(sps.binomtest(min(b, c), b + c, 0.5, alternative="two-sided").pvalue)


def min_detectable_difference(n: int, discordant: int, alpha: float = 0.05) -> float | None:
    """The smallest accuracy difference |b - c| / n that reaches p < alpha with `discordant` = b + c items
    discordant out of n; None when no split of the discordant items can reach it (or n = 0)."""
    if n <= 0:
        return None
    for k in range(discordant // 2, -1, -1):  # k = min(b, c); fewer is more lopsided
        if mcnemar_p(k, discordant - k) < alpha:
            return (discordant - 2 * k) / n
    return None


def mcnemar_power_warning(n: int, b: int, c: int, alpha: float = 0.05) -> str | None:
    """A warning when the A/B comparison is too small to show a difference; None when it is not.

    Rule: with d = b + c discordant items, the most lopsided split (0, d) has exact p = 2 * 0.5^d, which is
    below 0.05 only from d = 6 on (d = 5 gives 0.0625). The warning fires when
      1. n itself is too small for any split of all n items to reach p < alpha (n < 6 at alpha 0.05), or
      2. no split of the d observed discordant items could reach p < alpha, or
      3. d < MIN_DISCORDANT (10): significance is reachable only with an extreme split, so the test has little
         power; the message gives the minimum detectable difference.
    """
    d = b + c
    if min_detectable_difference(n, n, alpha) is None:
        return (f"only {n} items: even if one prompt were right on every item the other gets wrong, McNemar's "
                f"test could not reach p < {alpha:g}; label more items")
    mdd = min_detectable_difference(n, d, alpha)
    if mdd is None:
        return (f"only {d} discordant items (b={b}, c={c}) of {n}: no split of them could reach p < {alpha:g}; "
                "the comparison cannot show a difference")
    if d < MIN_DISCORDANT:
        return (f"only {d} discordant items (b={b}, c={c}) of {n}, fewer than {MIN_DISCORDANT}: the test has "
                f"little power; a difference needs an accuracy gap of at least {mdd:.3f}")
    return None


def mcnemar_exact(a_correct: Sequence[bool], b_correct: Sequence[bool], alpha: float = 0.05) -> McNemarResult:
    """McNemar's exact test on paired right/wrong outcomes of prompts A and B on the same items."""
    if len(a_correct) != len(b_correct):
        raise ValueError("a_correct and b_correct must be parallel")
    n = len(a_correct)
    both_right = sum(1 for x, y in zip(a_correct, b_correct) if x and y)
    b = sum(1 for x, y in zip(a_correct, b_correct) if x and not y)
    c = sum(1 for x, y in zip(a_correct, b_correct) if not x and y)
    why = Reasons()
    if not n:
        why.mark("no item compared", "p_value", "accuracy_a", "accuracy_b", "min_detectable_difference")
    mdd = min_detectable_difference(n, b + c, alpha)
    if mdd is None:
        why.mark(f"no split of the {b + c} discordant items reaches p < {alpha:g}", "min_detectable_difference")
    return McNemarResult(
        n=n, both_right=both_right, b=b, c=c, both_wrong=n - both_right - b - c,
        p_value=mcnemar_p(b, c) if n else None,
        accuracy_a=(both_right + b) / n if n else None, accuracy_b=(both_right + c) / n if n else None,
        min_detectable_difference=mdd, warning=mcnemar_power_warning(n, b, c, alpha), undefined=why)


class PromptComparison(BaseModel):
    """Prompt A against prompt B on the same human-labelled items of one decision."""

    decision: str
    name_a: str
    name_b: str
    n_items: int
    failed_a: list[str] = Field(description="items prompt A failed on (left out of the test)")
    failed_b: list[str]
    mcnemar: McNemarResult
    right_to_wrong: list[str] = Field(description="A right, B wrong")
    wrong_to_right: list[str] = Field(description="A wrong, B right")


def compare_prompts(
    decision: str,
    item_ids: Sequence[str],
    human: Sequence[str],
    judge_a: Sequence[str | None],
    judge_b: Sequence[str | None],
    *,
    name_a: str = "A",
    name_b: str = "B",
    alpha: float = 0.05,
) -> PromptComparison:
    """McNemar A/B on parallel sequences. Items where either prompt failed (None) are left out and listed."""
    if not len(item_ids) == len(human) == len(judge_a) == len(judge_b):
        raise ValueError("item_ids, human, judge_a and judge_b must be parallel")
    keep = [i for i in range(len(item_ids)) if judge_a[i] is not None and judge_b[i] is not None]
    a_ok = [judge_a[i] == human[i] for i in keep]
    b_ok = [judge_b[i] == human[i] for i in keep]
    return PromptComparison(
        decision=decision, name_a=name_a, name_b=name_b, n_items=len(item_ids),
        failed_a=[str(item_ids[i]) for i in range(len(item_ids)) if judge_a[i] is None],
        failed_b=[str(item_ids[i]) for i in range(len(item_ids)) if judge_b[i] is None],
        mcnemar=mcnemar_exact(a_ok, b_ok, alpha),
        right_to_wrong=[str(item_ids[i]) for i, x, y in zip(keep, a_ok, b_ok) if x and not y],
        wrong_to_right=[str(item_ids[i]) for i, x, y in zip(keep, a_ok, b_ok) if not x and y],
    )


def compare_prompts_on_items(
    items: Iterable[CalibrationItem],
    predictions_a: Mapping[str, str | None],
    predictions_b: Mapping[str, str | None],
    *,
    name_a: str = "A",
    name_b: str = "B",
    alpha: float = 0.05,
) -> list[PromptComparison]:
    """`compare_prompts` per decision (sorted); a missing prediction counts as a failure."""
    by_decision: dict[str, list[CalibrationItem]] = {}
    for item in items:
        by_decision.setdefault(item.decision, []).append(item)
    return [compare_prompts(d, [i.item_id for i in its], [i.human_label for i in its],
                            [predictions_a.get(i.item_id) for i in its], [predictions_b.get(i.item_id) for i in its],
                            name_a=name_a, name_b=name_b, alpha=alpha)
            for d, its in sorted(by_decision.items())]
