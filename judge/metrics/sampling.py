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

A third, `weighted`, is the sample `argue-judge sample` draws (active_probabilities, pareto_draw): each report
with its own probability, read back from the sample file (WeightedInclusion), the estimate inverse-probability
weighted.

Keys are (run_id, request_id), as judge.formats.judgments.ReportJudgment.key.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Collection, Sequence, Set
from pathlib import Path

import numpy as np

from judge.errors import InputError
from judge.labels import SAMPLE_DESIGNS as DESIGNS
from judge.labels import SampleDesign as Design

Key = tuple[str, str]
SAMPLE_KEY = "argue_sample"   # the first line of a sample file (`argue-judge sample`): {"argue_sample": 1, ...}


def is_sample_file(path: str | Path) -> bool:
    """Whether `path` is a sample file (its first line names itself), not human judgments."""
    if isinstance(path, str) and ("\n" in path or path.lstrip().startswith("{")):
        return False      # a literal record, not a path
    try:
        with open(path, encoding="utf-8") as handle:
            first = handle.readline()
        return SAMPLE_KEY in json.loads(first) if first.strip() else False
    except (OSError, ValueError, TypeError):
        return False


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

    def of(self, run_id: str, request_id: str) -> float:
        """Probability that `run_id`'s report of `request_id` is labelled (the same for every run here)."""
        return self.of_report(request_id)

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



# -- a sample the tool draws: inclusion probabilities from the judge's confidence ------------------------------

def decision_doubt(confidence: np.ndarray | float, threshold: np.ndarray | float | None = None) -> np.ndarray:
    """The chance a decision's applied verdict is wrong, as its model's confidence says: 1 - c for a verdict taken
    as the model wrote it (c the probability the model gave it), and with a threshold t on that probability the
    logistic of minus the distance |logit c - logit t| (0.5 at the threshold, where the applied verdict could
    go either way; the two agree at t = 0.5). On the embedded judge's 350 dev items the thresholded verdicts err
    on 44-47% of the items at confidence 0.90-0.97 (threshold 0.899) and on none above 0.98."""
    c = np.clip(np.asarray(confidence, dtype=float), 1e-6, 1 - 1e-6)
    t = 0.5 if threshold is None else np.clip(np.asarray(threshold, dtype=float), 1e-6, 1 - 1e-6)
    distance = np.abs(np.log(c / (1 - c)) - np.log(t / (1 - t)))
    return 1 / (1 + np.exp(distance))


def active_probabilities(uncertainty: Sequence[float], budget: float, floor: float,
                         settled: Sequence[float] | None = None) -> np.ndarray:
    """Inclusion probabilities pi_i = min(1, max(floor, c * u_i)), c such that sum_i (1 - settled_i) pi_i = budget:
    active inference's allocation (T. Zrnic, E. J. Candès, "Active statistical inference", ICML 2024): a unit's
    probability grows with the judge's expected error on it (u_i, e.g. sqrt(1 - confidence)), so labels go where the
    rectifier varies most (Neyman allocation, pi proportional to the rectifier's standard deviation; u_i =
    sqrt(decision_doubt) for a binary verdict); `floor` keeps
    every unit drawable, which inverse-probability weighting needs. All u_i equal gives budget / N each (a uniform
    sample). `settled`: each unit's probability of having been drawn already (a second round draws among the
    others, and its budget counts new labels)."""
    u = np.asarray(uncertainty, dtype=float)
    done = np.zeros(len(u)) if settled is None else np.asarray(settled, dtype=float)
    open_share = 1 - done
    if budget > open_share.sum() + 1e-9:
        raise ValueError(f"a budget of {budget:g} is more than the {open_share.sum():.0f} units left to draw")
    if floor * open_share.sum() > budget + 1e-9:
        raise ValueError(f"a minimum probability of {floor:g} over {open_share.sum():.0f} units needs a budget of at "
                         f"least {floor * open_share.sum():.1f}, not {budget:g}")
    if not np.any(u > 0):
        u = np.ones(len(u))

    def spent(c: float) -> float:
        return float((open_share * np.clip(np.maximum(floor, c * u), 0, 1)).sum())

    low, high = 0.0, 1.0
    while spent(high) < budget - 1e-12 and high < 1e12:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if spent(middle) < budget else (low, middle)
    return np.clip(np.maximum(floor, high * u), 0, 1)


def pareto_draw(pi: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of a fixed-size sample with inclusion probabilities close to `pi` (Pareto pi-ps sampling, B. Rosén,
    "On sampling with probability proportional to size", J. Statist. Plann. Inference 62, 1997): the `size` units
    with the smallest (U/(1-U)) / (pi/(1-pi)); a unit with pi = 1 is always drawn. Its variance is estimated as
    Poisson sampling's, the formula judge.metrics.ppi uses for unequal probabilities."""
    u = rng.random(len(pi))
    with np.errstate(divide="ignore"):
        odds = np.where(pi >= 1, -np.inf, (u / (1 - u)) / (pi / (1 - pi)))
    return np.sort(np.argsort(odds, kind="stable")[:size])


class WeightedInclusion:
    """Inclusion probabilities read from a sample file (`argue-judge sample`): one per report, as it was drawn.
    The human file must judge exactly the drawn reports: a drawn report left unjudged would bias the estimate
    (the ones people skip are rarely a random share)."""

    design = "weighted"
    stratified_reports = False

    def __init__(self, probabilities: dict[Key, float], judged: Set[Key], labelled: Set[Key], source: str,
                 human_file: str = "--human", kind: str = "active"):
        check_subset(judged, labelled, human_file)
        unknown = sorted(set(probabilities) - judged)
        if unknown:
            run, request = unknown[0]
            raise InputError(f"the sample lists {len(unknown)} report(s) the judgments do not have ({run}/{request}"
                             f"{' and more' if len(unknown) > 1 else ''}); draw the sample from these judgments",
                             source)
        unsampled = sorted(labelled - set(probabilities))
        if unsampled:
            run, request = unsampled[0]
            raise InputError(f"{len(unsampled)} human-judged report(s) are not in the sample ({run}/{request}); "
                             f"their probability of being drawn is unknown: judge only the sampled reports",
                             human_file)
        missing = sorted(set(probabilities) - labelled)
        if missing:
            run, request = missing[0]
            raise InputError(f"{len(missing)} sampled report(s) have no human judgment ({run}/{request}"
                             f"{' and more' if len(missing) > 1 else ''}); judge every sampled report (skipped "
                             "ones would bias the weighted estimate)", human_file)
        self._probabilities = probabilities
        self._kind = kind

    def of(self, run_id: str, request_id: str) -> float:
        return self._probabilities.get((run_id, request_id), math.nan)

    def describe(self) -> str:
        return (f"weighted ({self._kind} sample file: {len(self._probabilities)} reports, inverse-probability "
                f"weighted)")
