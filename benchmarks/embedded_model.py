"""How fast is the embedded offline judge on this machine?

    python benchmarks/embedded_model.py [--n 6] [--n-ctx 8192] [--skip-assembly]

Prints plain figures:
  * assembly: the first assembly of the 22 parts into a fresh temporary cache dir (stream + sha256 + rename),
    then the second call, which trusts the verified marker (the temporary copy is removed afterwards);
  * model load time (llama.cpp, from the real cache dir);
  * judgments per minute, cold (distinct prompts, no shared prefix) and with prefix reuse (one long instruction
    + document prefix, a different sentence at the end), each judgment a full instructor JSON_SCHEMA call
    through litellm -> argue-local;
  * event-loop lag while an ``acompletion`` runs (should stay near the tick interval).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import instructor  # noqa: E402
import litellm  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

from judge.llm import llama_provider  # noqa: E402
from judge.llm.embedded import EMBEDDED_MODEL, embedded_available, ensure_model_file  # noqa: E402


class Support(BaseModel):
    reasoning: str = Field(description="one short sentence")
    verdict: Literal["supported", "not_supported"]


INSTRUCTION = (
    "You are an assessor for a report-generation evaluation. You are given one document and one sentence "
    "taken from a report that cites the document. Decide whether the document supports the sentence: answer "
    "'supported' only if a reader of the document alone would agree that everything the sentence asserts is "
    "stated or directly implied by the document. Paraphrase is fine; added facts, numbers, dates or names that "
    "the document does not give make the sentence not supported. Give one short sentence of reasoning first, "
    "then the verdict. Reply in JSON."
)

CITIES = ["Avenor", "Brisk", "Calderra", "Dunmore", "Elstow", "Farrow", "Glenmark", "Hollin", "Istra", "Jarrow",
          "Kestel", "Lorne", "Marrow", "Norwick", "Oldham", "Penrith"]
INDUSTRIES = ["shipbuilding", "textiles", "glassmaking", "brewing", "printing", "steel", "tanning", "pottery"]


def document(i: int) -> str:
    """A ~550-token synthetic news passage; different i gives different words from the first token on."""
    city = CITIES[i % len(CITIES)]
    other = CITIES[(i * 7 + 3) % len(CITIES)]
    industry = INDUSTRIES[i % len(INDUSTRIES)]
    year = 1850 + 7 * i
    lines = [
        f"{city} Chronicle, report number {1000 + 37 * i}.",
        f"The town of {city} was founded in {year} on the banks of the river {other[::-1].title()}.",
        f"Its early economy rested on {industry}, which employed about {300 + 41 * i} workers by {year + 30}.",
        f"In {year + 45} a railway line linked {city} with {other}, cutting the journey to {2 + i % 5} hours.",
        f"The council of {city} opened a public library in {year + 52} with {1200 + 13 * i} volumes.",
        f"A flood in {year + 61} damaged the lower town; {40 + i} houses had to be rebuilt.",
        f"The population of {city} reached {12000 + 517 * i} at the census of {year + 80}.",
        f"Mayor Elena {other} served from {year + 90} to {year + 98} and founded the {city} music festival.",
        f"The {industry} works closed in {year + 110}, and the site became a museum of local history.",
        f"Today {city} is twinned with {other} and hosts a market every {['Monday', 'Friday', 'Sunday'][i % 3]}.",
    ]
    # repeat with small variations to reach a realistic passage length
    more = [f"Archive note {k}: records of {city} from {year + 5 * k} mention {industry} exports of "
            f"{100 + 3 * k + i} tonnes to {other}." for k in range(1, 19)]
    return " ".join(lines + more)


def messages(doc: str, sentence: str, instruction: str = INSTRUCTION) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": instruction},
        {"role": "user", "content": f"Document:\n{doc}\n\nSentence: {sentence}"},
    ]


def judge(client, msgs) -> tuple[float, int, int, int]:
    started = time.perf_counter()
    _, raw = client.chat.completions.create_with_completion(
        model=EMBEDDED_MODEL, response_model=Support, messages=msgs, max_retries=1, max_tokens=200,
    )
    elapsed = time.perf_counter() - started
    cached = getattr(raw.usage.prompt_tokens_details, "cached_tokens", 0) or 0
    return elapsed, raw.usage.prompt_tokens, raw.usage.completion_tokens, cached


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "n/a"


def report(label: str, rows: list[tuple[float, int, int, int]]) -> None:
    secs = [r[0] for r in rows]
    mean = statistics.mean(secs)
    print(f"{label}: {len(rows)} judgments, {mean:.2f} s/judgment (median {statistics.median(secs):.2f}, "
          f"min {min(secs):.2f}, max {max(secs):.2f}), {60 / mean:.1f} judgments/min; "
          f"prompt tokens {statistics.mean(r[1] for r in rows):.0f}, completion tokens "
          f"{statistics.mean(r[2] for r in rows):.0f}, "
          f"KV-reused prompt tokens {statistics.mean(r[3] for r in rows):.0f}; "
          f"1-min load average after: {loadavg()} (other processes on the CPUs slow llama.cpp down a lot)")


async def loop_lag(client_async, msgs) -> tuple[float, float]:
    """Max delay of a 50 ms ticker while one acompletion runs, and that call's duration."""
    lags: list[float] = []
    done = asyncio.Event()

    async def ticker():
        while not done.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.05)
            lags.append(time.perf_counter() - t - 0.05)

    task = asyncio.create_task(ticker())
    started = time.perf_counter()
    await client_async.chat.completions.create(
        model=EMBEDDED_MODEL, response_model=Support, messages=msgs, max_retries=1, max_tokens=200,
    )
    duration = time.perf_counter() - started
    done.set()
    await task
    return max(lags) if lags else 0.0, duration


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=6, help="judgments per scenario (default 6)")
    ap.add_argument("--n-ctx", type=int, default=llama_provider.N_CTX, help="context window to load with")
    ap.add_argument("--skip-assembly", action="store_true", help="do not time a fresh assembly")
    args = ap.parse_args()

    reason = embedded_available()
    if reason:
        print(f"embedded judge unavailable: {reason}")
        return 1
    print(f"machine: {os.cpu_count()} CPUs; llama.cpp threads = {llama_provider._cpu_threads()}; "
          f"n_ctx = {args.n_ctx}; 1-min load average before: {loadavg()}")

    if not args.skip_assembly:
        scratch = Path(tempfile.mkdtemp(prefix="argue-embedded-bench-"))
        try:
            t = time.perf_counter()
            ensure_model_file(scratch)
            first = time.perf_counter() - t
            t = time.perf_counter()
            ensure_model_file(scratch)
            second = time.perf_counter() - t
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        print(f"assembly: first {first:.2f} s (22 parts, 1.12 GB, streamed + sha256 + rename); "
              f"verified-marker path {second * 1000:.2f} ms")

    t = time.perf_counter()
    path = ensure_model_file()
    print(f"ensure_model_file() on the real cache dir: {time.perf_counter() - t:.2f} s ({path})")

    llama_provider.N_CTX = args.n_ctx
    llama_provider.register_embedded_provider()
    t = time.perf_counter()
    llama_provider.get_llama()
    print(f"model load: {time.perf_counter() - t:.2f} s (llama.cpp reports {llama_provider.load_seconds():.2f} s)")

    client = instructor.from_litellm(litellm.completion, mode=instructor.Mode.JSON_SCHEMA)
    judge(client, messages(document(999), "The town was founded in 1850."))  # warm-up (not timed)

    # cold: each prompt differs from the first token on (own instruction wording, own document)
    cold = []
    for i in range(args.n):
        instruction = f"Task {i + 1} of {args.n} for assessor #{100 + 17 * i}. " + INSTRUCTION
        doc = document(i)
        cold.append(judge(client, messages(doc, f"The population of {CITIES[i]} reached {12000 + 517 * i}.",
                                            instruction=f"[{CITIES[(i + 5) % len(CITIES)]}] {instruction}")))
    report("cold (no shared prefix)", cold)

    # prefix reuse: same instruction + same document, a different sentence at the end
    doc = document(42)
    sentences = [
        f"The town of {CITIES[42 % 16]} was founded in {1850 + 7 * 42}.",
        "The library opened with more than a million volumes.",
        f"The railway cut the journey to {2 + 42 % 5} hours.",
        "The mayor founded a film festival.",
        f"A flood damaged the lower town and {40 + 42} houses had to be rebuilt.",
        "The town hosts a market every Tuesday.",
        "The works closed and the site became a museum.",
        "The town is twinned with Paris.",
    ]
    judge(client, messages(doc, "The town has a river."))  # prime the shared prefix (not timed)
    warm = [judge(client, messages(doc, sentences[i % len(sentences)])) for i in range(args.n)]
    report("prefix reuse (same instruction + document, different sentence)", warm)

    aclient = instructor.from_litellm(litellm.acompletion, mode=instructor.Mode.JSON_SCHEMA)
    lag, duration = asyncio.run(loop_lag(aclient, messages(doc, "The town was founded by monks.")))
    print(f"event loop during acompletion: call {duration:.2f} s, max 50 ms-ticker lag {lag * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
