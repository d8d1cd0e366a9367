"""Judging: the walk of the ARGUE flowchart's table (judge.chart; written once, as a generator), the walker that
drives it over a report, the prompts and passages a decision shows the model, the decision thresholds, and
`decisions/`, one module per decision. Imports the kernel, `formats/`, `defence/` and `llm/`; nothing above it."""
