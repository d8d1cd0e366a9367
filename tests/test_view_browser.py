"""The view in a real browser: headless Chromium opens the bundled example's index and a report page, runs the
pages' script under their Content-Security-Policy, and we read the DOM it ends with (`--dump-dom`) and save
screenshots. Skipped, with the reason, only where Chromium is not installed; under CI (CI=true) a missing
Chromium fails, because .ci/run installs it."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from judge.view import write_view
from tests.test_view import Page, example, expected_css, hostile_records, report_pages, view  # noqa: F401 (fixtures)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    reason = "Chromium is not installed (Debian: apt-get install chromium); .ci/run installs it"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    binary = find_chromium()
    profile = tmp_path_factory.mktemp("chromium-profile")

    def run(url: str, *extra: str) -> str:
        # A fresh profile and every background service off: the browser must not touch the network.
        command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   "--hide-scrollbars", f"--user-data-dir={profile}", *extra, url]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    return run


def dom(chromium, path: Path, fragment: str = "") -> Page:
    html = chromium(path.as_uri() + fragment, "--dump-dom", "--virtual-time-budget=2000")
    assert 'data-script="ready"' in html, "the page's script did not run to its end"
    return Page(html)


def screenshot(chromium, path: Path, png: Path, size: str) -> bytes:
    chromium(path.as_uri(), f"--screenshot={png}", f"--window-size={size}")
    data = png.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000
    return data


def test_index_in_chromium_shows_each_runs_outcome_counts(example, view, chromium, tmp_path):  # noqa: F811
    _, records, *_ = example
    out, _ = view
    page = dom(chromium, out / "index.html")
    for run in {j.run_id for j in records}:
        expected = Counter(s.outcome for j in records if j.run_id == run for s in j.sentences
                           if s.status == "judged" and s.outcome is not None)
        row = next(e for e in page.having(tag="tr") if e["attrs"].get("data-run") == run)
        start = page.elements.index(row)
        shown = [e for e in page.elements[start:] if e["tag"] == "text" and "count" in e["attrs"].get("class", "")]
        assert {int(e["attrs"]["data-outcome"]): int(e["text"]) for e in shown[:8]} == \
            {n: expected.get(n, 0) for n in range(1, 9)}
    screenshot(chromium, out / "index.html", tmp_path / "index.png", "1366,900")


def test_report_page_in_chromium_shows_the_counts_and_opens_a_linked_sentence(example, view, chromium,  # noqa: F811
                                                                              tmp_path):
    _, records, *_ = example
    out, _ = view
    judgment = next(j for j in records if j.key == ("run-padded", "ex-101"))
    path = next(p for p in (out / "reports").glob("*.html") if p.name.startswith("run-padded__ex-101-"))
    page = dom(chromium, path, "#s2")
    expected = Counter(expected_css(s) for s in judgment.sentences)
    chips = {e["attrs"]["data-kind"]: int(e["attrs"]["data-count"]) for e in page.having("chip")}
    assert {k: v for k, v in chips.items() if v} == dict(expected)
    sentences = page.having("sentence", "li")
    assert Counter(e["attrs"]["class"].split()[1] for e in sentences) == expected
    # the script opened the sentence named in the URL, and only that one
    opened = [e for e in page.having(tag="details") if "open" in e["attrs"] and "expandable" in e["attrs"]["class"]]
    assert len(opened) == 1 and page.elements.index(opened[0]) == page.elements.index(sentences[1]) + 1
    screenshot(chromium, path, tmp_path / "report.png", "1366,1100")


def test_hostile_report_does_not_run_in_chromium(example, chromium, tmp_path):  # noqa: F811
    _, records, *_ = example
    files = write_view(hostile_records(records), tmp_path)
    for path in files.all:
        html = chromium(path.as_uri(), "--dump-dom", "--virtual-time-budget=2000")
        assert 'data-script="ready"' in html
        assert 'data-pwned="1"' not in html and "<img" not in html
