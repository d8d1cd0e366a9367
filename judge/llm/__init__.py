"""The only package that talks to models. Everything else hands it messages and a response model.

litellm fetches a remote price map at import unless told not to; we never want a network call we did not ask
for (and the price map only feeds cost reporting, never a score).
"""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
