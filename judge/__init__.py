"""argue-judge: ARGUE-style evaluation of cited reports with LLM judges."""

__version__ = "0.1.0"
