"""The only package that talks to models: the judge a model id names, parsed once (`judges`: embedded, hosted or
routed, and what each can do), the decision client (`client`: litellm + instructor, one retry policy,
one budget), what relies on instructor's internals (`instructor_compat`), costs (`pricing`), several servers
(`router`), confidence from log-probabilities (`logprob`), a reasoning judge's thinking kept apart from its answer
(`reasoning`), the decision cache (`cache/`) and the embedded llama.cpp
judge (`embedded/`). Everything else hands it messages, a pydantic response class and an opaque contract hash; it
may import only judge.errors and judge.settings, never a domain module (tests/test_architecture.py checks it).

litellm fetches a remote price map at import unless told not to; we never want a network call we did not ask
for (and the price map only feeds cost reporting, never a score).
"""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
