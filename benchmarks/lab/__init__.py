"""Code only the benchmarks use, kept out of the wheel: it imports the package's pieces and adds what an experiment
needs beside them.

  legacy_support   the support question in its older layout (copied evidence), for benchmarks/embedded_model.py
  match_nugget     which nugget of another bank asks the same (a created bank against a person's), for
                   benchmarks/nugget_creation.py; its prompt is prompts/match_nugget.md here
  responders       fake-endpoint rules for these two decisions, on top of judge.testing's
"""
