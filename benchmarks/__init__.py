"""Benchmarks: scripts that print figures, run from the checkout's root as `python -m benchmarks.<name>`.

Nothing here asserts a speed; the figures, with date, machine and CPU, are in benchmarks/RESULTS.md. The package is
not installed with argue-judge (the wheel holds `judge` only).

Speed and memory:
  cached_rerun      a fully cached re-run of `evaluate` (the synthetic workload)
  throughput        decisions/s by client concurrency against a fake endpoint with latency
  client_floor      decisions/s and client CPU, layer by layer of the client stack
  scale             TREC-scale throughput, several fake endpoints in other processes
  scale_scenarios   kill and resume, two shards sharing a Redis cache, empty reports at 100,000
  baselines         the lexical baselines (ROUGE, pa-BLEU, pa-METEOR, EXAM) on generated reports
  startup           import time and wall time of the CLI
  long_document     passage selection on a 50 MB document
  embedded_model    the embedded judge: decisions per minute, prompt reuse, kernels
Robustness:
  faults            a fake endpoint that fails (429, 500, disconnects, malformed bodies, kills, a dead server)
Measurements of the judge's behaviour (research; none reproduces a shipped artefact, see calibration/README.md):
  injection_detector  the injection detector's false flags on honest text and its recall on attacks
  passage_fill        how much of a long document the judge is shown
  support_probe       whether a probe of the embedded model's hidden state ranks support better than its verdict
  ppi_coverage        coverage of prediction-powered intervals on the embedded judge's dev items

Shared: `benchmarks.workload` builds the synthetic collections; `ROOT` is the checkout; `benchmarks.lab` holds the
code only benchmarks use (the older support layout, the match_nugget decision), kept out of the package.
"""

import os
from pathlib import Path

# Before any benchmark imports litellm: no price-map fetch, no Hugging Face lookup (the benchmarks run offline).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
