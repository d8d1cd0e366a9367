"""How long does an evaluation take to fail against a server that is down?

    python benchmarks/dead_server.py [--timeout 2] [--concurrency 4] [--copies 1]

On the bundled example (`--copies N` repeats its reports under N run ids, for more decisions), with the default
retry policy (RetryPolicy(): 6 transport attempts with exponential backoff, give up after
RetryPolicy.give_up_after transport failures in a row): once against a port nobody listens on (connections
refused) and once against a FakeEndpoint that accepts every request and never answers (`--timeout` ends each
attempt). Prints the wall time, the decisions asked, failed and left unasked, and the run's failure line.
Runs with whatever `judge` is first on sys.path: this checkout, or another one's copy of this script.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported: no price fetch
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import litellm  # noqa: E402

from judge.run.evaluate import EvalConfig, Inputs, evaluate  # noqa: E402
from judge.settings import ModelSettings  # noqa: E402
from judge.testing import FakeEndpoint, smart_responder  # noqa: E402

litellm.suppress_debug_info = True
for noisy in ("instructor", "LiteLLM", "litellm", "httpx"):
    logging.getLogger(noisy).setLevel(logging.CRITICAL)

EXAMPLES = ROOT / "examples"


def refusing_port() -> int:
    """A local port with nothing listening on it: every connection is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def copied_reports(folder: Path, copies: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for source in sorted((EXAMPLES / "reports").glob("*.jsonl")):
        lines = []
        for copy in range(copies):
            for line in source.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                record["metadata"]["run_id"] += f"-{copy}"
                lines.append(json.dumps(record))
        (folder / source.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def fail_against(api_base: str, root: Path, reports: Path, timeout: float, concurrency: int) -> str:
    config = EvalConfig(model=ModelSettings("openai/fake", api_base, "x", timeout=timeout), cache_dir=root / "cache",
                        concurrency=concurrency)
    started = time.perf_counter()
    with Inputs.load([reports], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"], [EXAMPLES / "docs.jsonl"],
                     index_dir=root / "docstore") as inputs:
        evaluation = evaluate(inputs, config)
    seconds = time.perf_counter() - started
    usage = evaluation.usage
    unasked = getattr(usage, "unasked", 0)
    return (f"{seconds:7.1f} s  {usage.model_calls} asked, {usage.transport_retries} retries, {usage.failures} failed "
            f"({unasked} not asked)\n    {evaluation.failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--copies", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="argue-dead-") as tmp:
        root = Path(tmp)
        reports = copied_reports(root / "reports", args.copies)
        refused = fail_against(f"http://127.0.0.1:{refusing_port()}/v1", root / "refused", reports, args.timeout,
                               args.concurrency)
        print(f"connections refused:    {refused}")
        with FakeEndpoint(smart_responder) as ep:
            ep.fail_next(["hang"] * 1_000_000)
            hangs = fail_against(ep.api_base, root / "hangs", reports, args.timeout, args.concurrency)
            print(f"hangs (--timeout {args.timeout:g}):  {hangs}")


if __name__ == "__main__":
    main()
