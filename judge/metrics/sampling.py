"""How the human-judged reports were chosen, and the inclusion probabilities that follow for PPI's units.

Two designs (`--sample`):

* `reports`: a simple random sample of reports was judged, stratified by request where possible: when every
  request has a judged report, the sample is taken as a simple random sample within each request (a sample over
  all reports, conditioned on how many fell in each request, is the same design) and a run's report for request
  r is labelled with probability pi_r = m_r / R_r (m_r of the request's R_r reports judged). Otherwise a request
  with no judged report would have pi = 0 and be left out of the target, so the sample is taken as
  unstratified: pi = m / R over all reports.
* `requests`: whole requests were sampled at random and every report of a sampled request judged (how TREC
  assessors work: some topics judged fully). This is a cluster design with requests as clusters; a run's unit
  is its report of a request, so the variance is computed at the request level, pi = sampled / all requests for
  every unit of a run. A human file that judged part of a request's reports is refused.

Keys are (run_id, request_id), as judge.formats.judgments.ReportJudgment.key.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Set

from judge.errors import InputError
from judge.labels import SAMPLE_DESIGNS as DESIGNS
from judge.labels import SampleDesign as Design

Key = tuple[str, str]


def check_subset(judged: Set[Key], labelled: Collection[Key], human_file: str) -> None:
    """Refuse human judgments of reports the judge did not judge (a different run or request set)."""
    extra = sorted(set(labelled) - judged)
    if extra:
        shown = ", ".join(f"{run}/{request}" for run, request in extra[:3])
        more = f" and {len(extra) - 3} more" if len(extra) > 3 else ""
        raise InputError(f"{len(extra)} human-judged report(s) are not among the judged reports ({shown}{more}); "
                         "the human file must judge a subset of the judge's reports", human_file)


class Inclusion:
    """Inclusion probabilities of one design, for the units of a run (a pair of runs is compared from its two runs'
    estimates: judge.metrics.ppi.ppi_difference)."""

    def __init__(self, design: Design, judged: Set[Key], labelled: Set[Key], human_file: str = "--human"):
        if design not in DESIGNS:
            raise InputError(f"--sample must be one of {', '.join(DESIGNS)}, not {design!r}")
        check_subset(judged, labelled, human_file)
        self.design = design
        self._reports = Counter(request for _, request in judged)      # R_r
        self._judged = Counter(request for _, request in labelled)     # m_r
        if design == "requests":
            partial = sorted(r for r, m in self._judged.items() if m < self._reports[r])
            if partial:
                r = partial[0]
                raise InputError(
                    f"--sample requests means every report of a sampled request was judged, but request {r} has "
                    f"{self._judged[r]} of its {self._reports[r]} reports judged"
                    + (f" (and {len(partial) - 1} more such requests)" if len(partial) > 1 else "")
                    + "; use --sample reports", human_file)
            self._request_share = len(self._judged) / len(self._reports) if self._reports else 0.0
        # Stratify by request only where every stratum was sampled (see the module docstring).
        self.stratified_reports = all(self._judged[r] >= 1 for r in self._reports)

    def of_report(self, request_id: str) -> float:
        """Probability that a run's report of `request_id` is labelled."""
        if self.design == "requests":
            return self._request_share
        if self.stratified_reports:
            return self._judged[request_id] / self._reports[request_id]
        return _pick_one(sum(self._judged.values()), sum(self._reports.values()))

    def describe(self) -> str:
        """The design as applied, for the output files and the console."""
        if self.design == "requests":
            return f"requests (cluster: {len(self._judged)} of {len(self._reports)} requests judged in full)"
        strata = "stratified by request" if self.stratified_reports else \
            "not stratified (some request has no judged report)"
        return f"reports ({sum(self._judged.values())} of {sum(self._reports.values())} judged, {strata})"


def _pick_one(m: int, total: int) -> float:
    return m / total if total else 0.0

