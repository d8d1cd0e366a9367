"""Regenerate docs/view-index.png and docs/view-report.png: the bundled example judged by the test suite's
scripted judge (tests/conftest.py, through the local FakeEndpoint: no model, no network), shown in headless
Chromium. Run from the repository root: python docs/view-screenshots.py"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import smart_responder  # noqa: E402

from judge.llm.client import ModelSettings  # noqa: E402
from judge.run.evaluate import evaluate  # noqa: E402
from judge.run.inputs import Inputs  # noqa: E402
from judge.run.spec import EvalSpec  # noqa: E402
from judge.testing import FakeEndpoint  # noqa: E402
from judge.view import write_view  # noqa: E402

EXAMPLES = ROOT / "examples"


def shoot(url: str, png: Path, size: str, profile: Path) -> None:
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={size}",
                    f"--screenshot={png}", url], check=True, capture_output=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        inputs = Inputs.load([EXAMPLES / "reports"], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
                             [EXAMPLES / "docs.jsonl"], index_dir=work / "docstore")
        with FakeEndpoint(smart_responder) as ep:
            evaluation = evaluate(inputs, EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x"),
                                                      cache=work / "cache"))
        files = write_view(evaluation.judgments, work / "view", requests=inputs.requests, banks=inputs.banks,
                           documents=inputs.documents)
        print(f"{len(files.all)} files, {files.total_bytes} bytes")
        report = next(p for p in files.pages if p.name.startswith(sys.argv[1] if len(sys.argv) > 1 else
                                                                   "run-cited__ex-101-"))
        fragment = sys.argv[2] if len(sys.argv) > 2 else "#s2"
        shoot(files.index.as_uri(), ROOT / "docs" / "view-index.png", "1366,768", work / "profile")
        shoot(report.as_uri() + fragment, ROOT / "docs" / "view-report.png", "1366,1300", work / "profile")


if __name__ == "__main__":
    main()
