"""Write the view: index.html, one page per report, one comparison page per paired report.

Every page is self-contained (CSS and a small script inline; no URL outside the folder) and every piece of
report, request and document text goes through Jinja2's autoescaping. A Content-Security-Policy allows only
the page's own script (by its hash) and no network at all, so even a mistake in escaping could not run a
report's `<script>` or fetch anything.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from judge._version import __version__
from judge.errors import InputError
from judge.formats.atomic import write_text_atomic
from judge.formats.judgments import ReportJudgment
from judge.formats.lock import output_lock
from judge.labels import OUTCOME_VALUE, CitationPolicy, Outcome
from judge.types import DocumentLookup, NuggetBank, Request
from judge.view.compare import Comparison, compare
from judge.view.model import FLAG_TEXT, OUTCOME_TEXT, VALUE_STYLE, Site, build_site

REPORTS_DIR = "reports"
COMPARE_DIR = "compare"
# The files a view wrote, one path (relative to its folder) a line: the next view into the folder removes those
# it does not write again, and never a file this list does not name (the user's own notes beside the pages).
MANIFEST = ".argue-view-files"


@dataclass
class ViewFiles:
    """What write_view wrote: the index and every page (paths), plus the comparison when there was one."""

    index: Path
    pages: list[Path] = field(default_factory=list)
    comparison: Comparison | None = None

    @property
    def all(self) -> list[Path]:
        return [self.index, *self.pages]

    @property
    def total_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.all)


@cache
def _environment() -> Environment:
    env = Environment(loader=PackageLoader("judge.view", "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    static = resources.files("judge.view") / "templates"
    css = (static / "view.css").read_text(encoding="utf-8")
    js = (static / "view.js").read_text(encoding="utf-8")
    script_hash = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
    env.globals.update(
        version=__version__,
        # Our own constant CSS and script: marked safe so they are inlined verbatim.
        css=Markup(css), js=Markup(js),
        csp=f"default-src 'none'; script-src 'sha256-{script_hash}'; style-src 'unsafe-inline'; img-src data:; "
            "base-uri 'none'; form-action 'none'",
        outcome_text=OUTCOME_TEXT, flag_text=FLAG_TEXT,
        outcome_css={int(o): VALUE_STYLE[OUTCOME_VALUE[o]][0] for o in Outcome},
        outcome_symbol={int(o): VALUE_STYLE[OUTCOME_VALUE[o]][1] for o in Outcome},
    )
    return env


def render_page(template: str, **context: object) -> str:
    return _environment().get_template(template).render(**context)


def write_site(site: Site, out_dir: Path, comparison: Comparison | None = None, *, has_banks: bool = False,
               estimates: Mapping[str, Any] | None = None) -> ViewFiles:
    """Render and write every page of `site` (and of `comparison`); pages an earlier view wrote into the same
    folder (its manifest) and this one does not are removed, so no link points at stale judgments. Nothing else
    in the folder is touched. `estimates`: the prediction-powered estimates as
    judge.run.prediction_powered.ppi_json gives them (shown on the index with their intervals)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = ViewFiles(index=out_dir / "index.html", comparison=comparison)
    _write(files.index, render_page("index.html.j2", title="ARGUE judgments", root="", site=site,
                                    comparison=comparison, estimates=estimates))
    for report in site.reports:
        path = out_dir / report.file
        _write(path, render_page("report.html.j2", title=f"{report.run_id} / {report.request_id}", root="../",
                                 r=report, has_banks=has_banks))
        files.pages.append(path)
    for pair in comparison.pairs if comparison else ():
        path = out_dir / pair.file
        _write(path, render_page("compare.html.j2", title=f"compare {pair.a.run_id} / {pair.a.request_id}",
                                 root="../", p=pair, comparison=comparison))
        files.pages.append(path)
    written = {path.relative_to(out_dir).as_posix() for path in files.all}
    for stale in sorted(_earlier_view(out_dir) - written):
        (out_dir / stale).unlink(missing_ok=True)
    write_text_atomic(out_dir / MANIFEST, "".join(f"{name}\n" for name in sorted(written)))
    return files


def _earlier_view(out_dir: Path) -> set[str]:
    """The pages the previous view into `out_dir` wrote, by its manifest: only plain relative paths of `.html`
    files within the folder (an edited manifest cannot make a view delete anything else)."""
    manifest = out_dir / MANIFEST
    if not manifest.is_file():
        return set()  # no view wrote this folder (or one from before manifests): remove nothing
    names = set()
    for name in manifest.read_text(encoding="utf-8").splitlines():
        parts = Path(name).parts
        if name.endswith(".html") and parts and not Path(name).is_absolute() and ".." not in parts:
            names.add(Path(name).as_posix())
    return names


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_view(judgments: Iterable[ReportJudgment], out_dir: str | Path, *,
               requests: Mapping[str, Request] | None = None, banks: Mapping[str, NuggetBank] | None = None,
               documents: DocumentLookup | None = None, against: Iterable[ReportJudgment] | None = None,
               labels: tuple[str, str] = ("judgments", "against"), policy: CitationPolicy = "all",
               estimates: Mapping[str, Any] | None = None) -> ViewFiles:
    """The library path behind `argue-judge view` (and `eval --view`): judgments records in, static pages out.

    `requests`, `banks` and `documents` only add text (request statements, attesting documents, highlighted
    evidence); every outcome and score comes from the records, as `argue-judge score` computes them. With
    `against`, comparison pages pair the two sets' reports by (run_id, request_id); `labels` names the two sides.
    `estimates`: prediction-powered estimates from a human sample (ppi.json's content), shown on the index.
    Raises InputError on duplicate reports or (with `against`) reports whose sentences differ.
    """
    records = list(judgments)
    if not records:
        raise InputError("no judgments records to show")
    site = build_site(records, requests=requests, banks=banks, documents=documents, policy=policy,
                      folder=REPORTS_DIR)
    comparison = None
    if against is not None:
        other = build_site(list(against), requests=requests, banks=banks, documents=documents, policy=policy,
                           folder=REPORTS_DIR)
        comparison = compare(site, other, labels[0], labels[1], folder=COMPARE_DIR)
    with output_lock(out_dir, "view"):  # the records are checked: only now is the folder touched
        return write_site(site, Path(out_dir), comparison, has_banks=bool(banks), estimates=estimates)
