"""A panel of three prompt variants of the embedded judge against the single judge, on AttributionBench dev items.

    python -m benchmarks.panel_vote [--data ../shared/data] [--items 100] [--seed 0] [--cache DIR]
                                    [--exclude calibration/embedded-dev/items.jsonl]

The judges are the embedded model (the package's default) under three prompt directories: the shipped prompts,
and the two variants of benchmarks/data/panel-prompts (`strict`: check every fact; `entailment`: textual
entailment), which differ from the shipped prompts in supports_citation.md only. Every judge applies the shipped
decision threshold of the embedded judge (judge/data/embedded-thresholds.json, fitted on the shipped prompt), as
`eval --thresholds` would; the model's own verdicts (before the threshold) are reported too.

The items are a stratified sample (calibrate's `--sample`) of the AttributionBench dev items outside
--exclude (default: the 350 items of calibration/embedded-dev, which the threshold was fitted on). First the
single judge (shipped prompts) answers every item, then the panel (the shipped judge's answers come from the
cache, so the panel's added wall time is what its two other judges cost). It prints, per judge and for the
panel's three votes, Cohen's κ against the human labels, and the panel's Fleiss' κ and Krippendorff's α.

--cache DIR keeps the answers (default: a fresh temporary directory, so the wall times are those of a cold run);
a second run on the same DIR reproduces every figure but the wall times from the cache. With --cache-only nothing
is asked: the figures are those of the items every judge's answer is in the cache for (a run stopped part way).
Needs the `local` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
import time
from pathlib import Path

from benchmarks import ROOT
from judge.calibration.items import label_for
from judge.calibration.runner import ask_items
from judge.calibration.sources import Exclusion, ItemSources, SampleSize, load_items
from judge.calibration.stats.agreement import decision_agreement
from judge.diagnostics import Diagnostics
from judge.judging.decisions.asker import Decider
from judge.judging.panel import PanelDecider, panel_record
from judge.judging.thresholds import SHIPPED_THRESHOLDS, read_thresholds
from judge.labels import VOTES
from judge.llm.cache.store import open_decision_cache
from judge.llm.client import DecisionClient
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.llm.panel import PanelMember
from judge.metrics.panel_agreement import agreement_of
from judge.settings import JudgeSettings, ModelSettings

VARIANTS = ROOT / "benchmarks" / "data" / "panel-prompts"
LABELS = ["supported", "not_supported"]


def kappa(items, verdicts) -> str:
    result = decision_agreement([i.human_label for i in items],
                                [label_for(i.decision, verdicts[i.item_id]) for i in items], labels=LABELS,
                                item_ids=[i.item_id for i in items], n_boot=1000, seed=0)
    low, high = result.kappa_ci_low, result.kappa_ci_high
    ci = f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
    shown = "undefined" if result.kappa is None else f"{result.kappa:.3f}"
    return f"{shown}{ci}  acc {result.accuracy:.3f}  failed {result.failed}" if result.accuracy is not None \
        else shown


def shown(result, name: str) -> str:
    value = getattr(result, name)
    return f"{value:.3f}" if value is not None else f"undefined ({result.why(name)})"


async def main_async(args: argparse.Namespace) -> None:
    data = Path(args.data)
    exclusion = Exclusion.read(Path(args.exclude)) if args.exclude else None
    items = load_items(ItemSources(attributionbench=data / "attributionbench" / "dev.jsonl"),
                       SampleSize(every=args.items), args.seed, Diagnostics(), exclusion)
    model = ModelSettings(EMBEDDED_MODEL)
    rules, _ = read_thresholds(SHIPPED_THRESHOLDS)
    members = [PanelMember(model), PanelMember(model, VARIANTS / "strict"),
               PanelMember(model, VARIANTS / "entailment")]
    judging = JudgeSettings()  # calibrate's default: passages, quarantine, detector
    asking = (judging.passages, lambda: None, judging.withholds, judging.injection_detector)
    cache_dir = args.cache or tempfile.mkdtemp(prefix="panel-vote-")
    cache = open_decision_cache(cache_dir)
    print(f"{len(items)} AttributionBench dev items (seed {args.seed}); cache {cache_dir}; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.2f}")
    try:
        clients = [DecisionClient(m.model, cache, concurrency=4) for m in members]
        if args.cache_only:  # a client that has given up asks nothing: what is not cached is recorded failed
            for client in clients:
                client.usage.stopped = "--cache-only"
        started = time.perf_counter()
        single = await ask_items(items, Decider(clients[0], None, rules), *asking)
        single_seconds = time.perf_counter() - started
        print(f"single judge: {single_seconds:.0f} s", flush=True)
        panel = PanelDecider(members, clients, "majority", [rules] * len(members))
        started = time.perf_counter()
        records = await ask_items(items, panel, *asking)
        panel_seconds = time.perf_counter() - started
    finally:
        cache.close()
    if args.cache_only:
        whole = [i for i in items if not single[i.item_id].error]
        print(f"the single judge on the {len(whole)} items whose answer is cached: "
              f"{kappa(whole, {i: r.verdict for i, r in single.items()})}")
        answered = [i for i in items if not single[i.item_id].error
                    and not any(r.error for r in records[i.item_id].panel)]
        print(f"--cache-only: {len(answered)} of {len(items)} items have every judge's answer in the cache; the "
              "figures are theirs (no wall time: nothing was asked)")
        items = answered
    else:
        print(f"wall: single judge {single_seconds:.0f} s; the panel's two other judges {panel_seconds:.0f} s "
              f"(the shipped judge's answers from the cache); panel in all {single_seconds + panel_seconds:.0f} s "
              f"({(single_seconds + panel_seconds) / max(single_seconds, 1e-9):.2f}x)")
    print("\nCohen's kappa with the human labels [95% bootstrap CI]")
    names = [m.name for m in members]
    for position, name in enumerate(names):
        applied = {i: r.panel[position].verdict for i, r in records.items()}
        own = {i: (r.panel[position].model_verdict if r.panel[position].model_verdict is not None
                   else r.panel[position].verdict) for i, r in records.items()}
        print(f"  {name:<60} {kappa(items, applied)}")
        print(f"  {'   (model verdict, no threshold)':<60} {kappa(items, own)}")
    for vote in VOTES:
        voted = {i: panel_record(r.panel, vote, "panel").verdict for i, r in records.items()}
        print(f"  {'panel, ' + vote:<60} {kappa(items, voted)}")
    same = sum(single[i.item_id].verdict == records[i.item_id].panel[0].verdict for i in items)
    print(f"  (the single judge and the panel's shipped judge agree on {same} of {len(items)} items)")
    agreement = agreement_of(names, [[r.verdict for r in records[i.item_id].panel] for i in items])
    print(f"\namong the judges: Fleiss' kappa {shown(agreement, 'fleiss_kappa')}, Krippendorff's alpha (nominal) "
          f"{shown(agreement, 'krippendorff_alpha')}, split on {agreement.split} of {agreement.decisions} items")
    for pair in agreement.pairwise:
        print(f"  Cohen's kappa {pair.judges[0]} / {pair.judges[1]}: {shown(pair, 'kappa')} (n {pair.n})")
    if agreement.undefined:
        print(f"  undefined: {agreement.undefined}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("ARGUE_SHARED_DATA", str(ROOT.parent / "shared" / "data")))
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", default=None)
    parser.add_argument("--exclude", default=str(ROOT / "calibration" / "embedded-dev" / "items.jsonl"))
    parser.add_argument("--cache-only", action="store_true")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
