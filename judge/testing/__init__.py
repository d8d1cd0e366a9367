"""Test helpers: a local fake OpenAI-compatible endpoint (no network)."""

from judge.testing.fake_endpoint import (
    CREATED,
    NO_SDK_RETRIES,
    FakeEndpoint,
    default_responder,
    estimate_tokens,
    fake_endpoint,
    minimal_instance,
    schema_name,
    schema_of,
)

__all__ = [
    "CREATED",
    "NO_SDK_RETRIES",
    "FakeEndpoint",
    "default_responder",
    "estimate_tokens",
    "fake_endpoint",
    "minimal_instance",
    "schema_name",
    "schema_of",
]
