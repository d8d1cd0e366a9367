"""How much of a long document does the judge see, and how does that differ from the selection at another revision?

    python -m benchmarks.passage_fill [--old-rev 23e0006] [--budgets 6000,2000]

1. Every cited (sentence, document) pair of the bundled example and of the NeuCLIR example run
   (../shared/data/neuclir24/example-run): `select_passages` as it is and as it was at `--old-rev`, at each
   budget (windows of 800); prints how many shown texts differ and, for each difference, why (the document has
   a CJK sentence mark, or the old selection filled less than judge.judging.passages.FILL of the budget).
2. Documents of 1,600 and 3,200 characters without sentence breaks, Chinese with 。 and no spaces, Persian and
   Russian prose: the characters shown, before and after, at budgets of 800 and 1,600.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks import ROOT
from benchmarks.long_document import load_old
from judge.formats import read_reports
from judge.judging.passages import FILL, PassagePolicy, select_passages

COLLECTIONS = {
    "bundled example": (ROOT / "examples" / "reports", ROOT / "examples" / "docs.jsonl"),
    "NeuCLIR example run": (ROOT.parent / "shared/data/neuclir24/example-run/reports.jsonl",
                            ROOT.parent / "shared/data/neuclir24/example-run/docs.jsonl"),
}
CJK_MARKS = "。！？；"
SHAPES = {
    "English, no breaks": "the barrier cost forty million euros and opened in May " * 60,
    "Chinese, 。 no spaces": "防洪屏障耗资四千万欧元，于五月启用。当地居民对工程表示欢迎。" * 60,
    "Persian": "هزینه سد چهل میلیون یورو بود. آیا سد در ماه مه افتتاح شد؟ ساکنان از آن استقبال کردند. " * 30,
    "Russian": "Плотина обошлась в сорок миллионов евро. Её открыли в мае! Жители довольны работой. " * 30,
}


def cited_pairs(reports: Path, docs: Path) -> list[tuple[str, str]]:
    texts = {}
    with docs.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            texts[record["doc_id"]] = record["text"]
    return [(sentence.text, texts[doc_id]) for report in read_reports([reports]) for sentence in report.sentences
            for doc_id in sentence.citations if doc_id in texts]


def compare(old, budgets: list[int]) -> None:
    for name, (reports, docs) in COLLECTIONS.items():
        if not reports.exists():
            print(f"{name}: {reports} not found, skipped")
            continue
        pairs = cited_pairs(reports, docs)
        for budget in budgets:
            policy = PassagePolicy(max_chars=budget, window_chars=800)
            old_policy = old.PassagePolicy(max_chars=budget, window_chars=800)
            cut = changed = 0
            reasons: dict[str, int] = {}
            for sentence, text in pairs:
                new_shown, new_cut = select_passages(text, sentence, policy)
                old_shown, _ = old.select_passages(text, sentence, old_policy)
                cut += new_cut
                if new_shown == old_shown:
                    continue
                changed += 1
                if any(mark in text for mark in CJK_MARKS):
                    reason = "CJK sentence marks"
                elif len(old_shown) < FILL * budget:
                    tenth = len(old_shown) * 10 // budget
                    reason = f"old selection filled under {FILL:.0%} of the budget ({tenth}0-{tenth + 1}0%)"
                elif len(old_shown) > budget:
                    reason = f"old selection was {len(old_shown) - budget} characters over the budget"
                else:
                    reason = "other"
                reasons[reason] = reasons.get(reason, 0) + 1
            print(f"{name}, budget {budget}: {len(pairs)} cited pairs, {cut} documents cut, {changed} shown texts "
                  f"changed" + "".join(f"\n    {count} x {reason}" for reason, count in sorted(reasons.items())))


def fill(old) -> None:
    print(f"\n{'document':<24}{'chars':>7}{'budget':>8}{'shown before':>14}{'shown after':>13}")
    for name, text in SHAPES.items():
        for length in (1600, 3200):
            document = text[:length]
            for budget in (800, 1600):
                if budget >= length:
                    continue
                before, _ = old.select_passages(document, "barrier cost May 屏障耗资 سد Плотина",
                                                old.PassagePolicy(max_chars=budget, window_chars=800))
                after, _ = select_passages(document, "barrier cost May 屏障耗资 سد Плотина",
                                           PassagePolicy(max_chars=budget, window_chars=800))
                print(f"{name:<24}{length:>7}{budget:>8}{len(before):>14}{len(after):>13}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old-rev", default="23e0006", help="the revision to compare with")
    parser.add_argument("--budgets", default="6000,2000", help="budgets (characters) for the comparison")
    args = parser.parse_args()
    old = load_old(args.old_rev)
    compare(old, [int(b) for b in args.budgets.split(",")])
    fill(old)


if __name__ == "__main__":
    main()
