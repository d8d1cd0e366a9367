"""Prediction-powered estimates from a human sample (`human=` of `evaluate` and `score`; docs/ppi.md): the
estimates, and the files they are written to. How the sample was drawn is checked by judge.settings.HumanSample."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.diagnostics import Diagnostics
from judge.labels import CitationPolicy
from judge.types import NuggetBank

if TYPE_CHECKING:
    from collections.abc import Mapping

    from judge.judging.signature import ScoreSignature
    from judge.metrics.corrected import CorrectedScores
    from judge.metrics.scoring import Scores
    from judge.run.prediction_powered import HumanJudgments

@dataclass(frozen=True)
class HumanEstimates:
    """Prediction-powered estimates of each run's scores from a human sample (`human=`; docs/ppi.md): `corrected`
    (judge.metrics.corrected.CorrectedScores), the `signature` extended by the sample, and the files written."""

    corrected: CorrectedScores
    signature: ScoreSignature
    paths: list[Path] = field(default_factory=list)

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per run and measure (the rows of ppi.tsv), as ppi.json holds them."""
        from judge.run.prediction_powered import ppi_json

        return list(ppi_json(self.corrected, self.signature)["runs"])

    def to_pandas(self) -> Any:
        try:
            import pandas
        except ImportError:
            raise ImportError("to_pandas() needs pandas: pip install pandas (or use to_records())") from None
        return pandas.json_normalize(self.to_records())

    def _repr_html_(self) -> str:
        import html

        def cell(interval: dict[str, Any]) -> str:
            if interval["value"] is None:
                return "–"
            bounds = "" if interval["low"] is None else f" [{interval['low']:.3f}, {interval['high']:.3f}]"
            return f"{interval['value']:.3f}{bounds}"

        rows = "".join(f"<tr><td>{html.escape(r['run_id'])}</td><td>{html.escape(r['measure'])}</td>"
                       f"<td>{r['labelled']}/{r['reports']}</td><td>{cell(r['ppi'])}</td></tr>"
                       for r in self.to_records())
        return (f"<table><thead><tr><th>run_id</th><th>measure</th><th>n/N</th><th>PPI</th></tr></thead>"
                f"<tbody>{rows}</tbody></table><p><code>{html.escape(self.signature.short())}</code></p>")



def _estimates(scores: Scores, signature: ScoreSignature, human: HumanJudgments, judged: Any, sample: str,
               confidence: float, policy: CitationPolicy, banks: Mapping[str, NuggetBank] | None,
               diagnostics: Diagnostics) -> HumanEstimates:
    """The prediction-powered table; the human files' own warnings go to `diagnostics`."""
    from judge.run.prediction_powered import estimate_with_humans

    corrected, extended = estimate_with_humans(scores, signature, human, judged, sample, confidence,  # type: ignore[arg-type]
                                               policy, banks, diagnostics)
    return HumanEstimates(corrected, extended)


def _write_estimates(estimates: HumanEstimates, out: Path) -> HumanEstimates:
    """ppi.tsv, ppi-pairs.tsv and ppi.json in `out` (under the caller's lock on it)."""
    from judge.run.prediction_powered import write_ppi_files

    paths = list(write_ppi_files(estimates.corrected, estimates.signature, out).values())
    return HumanEstimates(estimates.corrected, estimates.signature, paths)
