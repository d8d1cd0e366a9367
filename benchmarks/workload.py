"""The synthetic collections the benchmarks judge, built in a folder so every script measures the same work.

- `generate_workload(root, runs, requests, sentences)`: requests, four documents and a v3 nugget bank per request,
  and one report per (run, request) whose cited facts are partly wrong, so the fake judge's verdicts vary; every
  report is distinct, so every decision is a model call on a cold cache (cached_rerun, throughput, client_floor,
  scale).
- `load(paths, index_dir)`: the same folder as `judge.run.evaluate.Inputs`.
- `generate_empty_workload(data, runs, requests)`: reports without sentences, for the fixed cost per report
  (scale_scenarios).
"""

from __future__ import annotations

import json
from pathlib import Path

from judge.run.inputs import Inputs

TOWNS = ["Avenor", "Brisk", "Calderra", "Dunmore", "Elstow", "Farrow", "Glenmark", "Hollin", "Istra",
         "Jarrow", "Kestel", "Lorne", "Marrow", "Norwick", "Oldham", "Penrith"]
PROJECTS = ["bridge", "tram line", "harbour wall", "library", "water plant", "solar farm", "ring road",
            "hospital"]
LEAD_INS = ["", "Records show that ", "Reports say that ", "It is documented that ", "Sources state that "]


def _facts(q: int) -> dict[str, str]:
    town, project = TOWNS[q % len(TOWNS)], PROJECTS[(q // len(TOWNS)) % len(PROJECTS)]
    return {"town": town, "project": f"the {town} {project} {q}", "year": str(2000 + q % 24),
            "workers": str(50 + q * 7), "firm": f"{TOWNS[(q + 5) % 16]} Works {q}"}


def generate_workload(root: Path, runs: int, requests: int, sentences: int = 8) -> dict[str, Path]:
    """Requests, 4 documents and a nugget bank per request, and one report per (run, request).

    Per report: an intro (uncited), cited facts (one per document, some with a wrong number so they are not
    supported), an uncited new claim and an absence claim; repeated in turn up to `sentences`. Runs word the
    same facts differently, so their decisions differ.
    """
    (root / "reports").mkdir(parents=True, exist_ok=True)
    (root / "nuggets").mkdir(exist_ok=True)
    with (root / "requests.jsonl").open("w") as req_out, (root / "docs.jsonl").open("w") as doc_out:
        for q in range(requests):
            f, rid = _facts(q), f"req-{q}"
            problem = (f"Report on {f['project']}: when it began, who built it, how many people work on it "
                       "and what it cost.")
            request = {"request_id": rid, "title": f["project"].capitalize(),
                       "background": "A synthetic request.", "problem_statement": problem}
            req_out.write(json.dumps(request) + "\n")
            docs = [f"Work on {f['project']} began in {f['year']}. Crews cleared the site first.",
                    f"{f['firm']} builds {f['project']}. The firm is based in {f['town']}.",
                    f"{f['project'].capitalize()} employs {f['workers']} workers. Most of them live nearby.",
                    f"The council of {f['town']} approved {f['project']} after a long debate."]
            for d, text in enumerate(docs):
                doc_out.write(json.dumps({"doc_id": f"{rid}-d{d}", "title": f"Doc {d} on {f['project']}",
                                          "text": text}) + "\n")
            bank = {
                "When did it begin?": {"question_id": f"{rid}-q1", "aggregator_type": "OR",
                                       "importance": "vital",
                                       "answers": {f["year"]: {"answer": f["year"],
                                                               "references": [{"doc_id": f"{rid}-d0"}]}}},
                "Who builds it?": {"question_id": f"{rid}-q2", "aggregator_type": "OR", "importance": "okay",
                                   "answers": {f["firm"]: {"answer": f["firm"],
                                                           "references": [{"doc_id": f"{rid}-d1"}]}}},
                "How many people work on it?": {
                    "question_id": f"{rid}-q3", "aggregator_type": "OR", "importance": "okay",
                    "answers": {f"{f['workers']} workers": {"answer": f"{f['workers']} workers",
                                                            "references": [{"doc_id": f"{rid}-d2"}]}}},
                "Has the cost been published?": {"question_id": f"{rid}-q4", "aggregator_type": "OR",
                                                 "importance": "okay", "absence": True,
                                                 "answers": {"No": {"answer": "No", "references": []}}},
            }
            (root / "nuggets" / f"nuggets_{rid}.v3.json").write_text(
                json.dumps({"query_id": rid, "format_version": "v3", "nugget_bank": bank}))
    for r in range(runs):
        with (root / "reports" / f"run-{r:02d}.jsonl").open("w") as out:
            for q in range(requests):
                f, rid, lead = _facts(q), f"req-{q}", LEAD_INS[r % len(LEAD_INS)]
                wrong = str(int(f["workers"]) + 1 + r)
                pool = [
                    (f"This report (version {r}) is about {f['project']}.", []),
                    (f"{lead}work on {f['project']} began in {f['year']} (run {r}).", [f"{rid}-d0"]),
                    (f"{lead}{f['firm']} builds {f['project']} (run {r}).", [f"{rid}-d1"]),
                    (f"{lead}{f['project']} employs {wrong} workers (run {r}).", [f"{rid}-d2"]),
                    (f"{lead}{f['project']} employs {f['workers']} workers (run {r}).", [f"{rid}-d2"]),
                    (f"{lead}the council of {f['town']} approved {f['project']} (run {r}).", [f"{rid}-d3"]),
                    (f"{lead}{f['project']} will open in {2030 + r} (run {r}).", []),
                    (f"{lead}the cost of {f['project']} has not been published (run {r}).", []),
                ]
                chosen = [pool[i % len(pool)] for i in range(sentences)]
                out.write(json.dumps({"metadata": {"run_id": f"run-{r:02d}", "topic_id": rid},
                                      "responses": [{"text": t[:1].upper() + t[1:], "citations": c}
                                                    for t, c in chosen]}) + "\n")
    return {"reports": root / "reports", "requests": root / "requests.jsonl", "docs": root / "docs.jsonl",
            "nuggets": root / "nuggets"}


def load(paths: dict[str, Path], index_dir: Path) -> Inputs:
    return Inputs.load([paths["reports"]], paths["requests"], [paths["nuggets"]], [paths["docs"]], index_dir)


def generate_empty_workload(data: Path, runs: int, requests: int) -> Path:
    """runs x requests empty reports in one folder (a file per run), the requests they answer, one document."""
    reports = data / "reports"
    reports.mkdir(parents=True)
    request_ids = [f"q{i}" for i in range(requests)]
    with (data / "requests.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps({"request_id": r, "title": r, "problem_statement": "Report on it."}) + "\n"
                       for r in request_ids)
    (data / "docs.jsonl").write_text(json.dumps({"doc_id": "d0", "text": "A document."}) + "\n", encoding="utf-8")
    for run in range(runs):
        with (reports / f"run-{run}.jsonl").open("w", encoding="utf-8") as out:
            out.writelines(json.dumps({"metadata": {"run_id": f"run-{run}", "topic_id": r}, "responses": []}) + "\n"
                           for r in request_ids)
    return reports
