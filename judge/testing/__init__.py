"""Test helpers: a local fake OpenAI-compatible endpoint (127.0.0.1 only, never the network) and its answers.

- `endpoint`: `FakeEndpoint`, the server with fault injection, latency and accounting (`server` holds its HTTP
  plumbing, `logprobs` its token log-probabilities);
- `schema_instance`: which JSON schema a request asks for, and a minimal valid instance of it;
- `responders`: answers shared by tests and benchmarks (`default_responder`, `smart_responder`).

Standard library only; nothing here imports the rest of `judge` but the flowchart's table (`judge.chart`, plain
data: the answer a judge that does not ask a decision gives), so the tests can drive the real client stack against
it without the package under test deciding what the "model" says.
"""

from judge.testing.endpoint import CREATED, NO_SDK_RETRIES, FakeEndpoint, estimate_tokens, fake_endpoint
from judge.testing.logprobs import DEFAULT_LOGPROB, constant_logprobs, tokenize
from judge.testing.responders import default_responder, smart_responder
from judge.testing.schema_instance import minimal_instance, schema_name, schema_of

__all__ = [
    "CREATED",
    "DEFAULT_LOGPROB",
    "NO_SDK_RETRIES",
    "FakeEndpoint",
    "constant_logprobs",
    "default_responder",
    "estimate_tokens",
    "fake_endpoint",
    "minimal_instance",
    "schema_name",
    "schema_of",
    "smart_responder",
    "tokenize",
]
