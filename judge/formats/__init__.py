"""Input readers: reports, requests, nugget banks and document collections, each into judge.types.

Every reader takes a path, a directory, a list of those, or literal text (a str containing a newline or
starting with `{`), and reports bad input as judge.errors.InputError naming the file, the line and what to
fix. Each reader reads a record with the registered format that detects it (judge.formats.registry: one module
per format in judge/formats/known/); judge.formats.loader takes files or domain objects alike for the core.
"""

from judge.formats.checks import citation_warnings, input_warnings
from judge.formats.documents import DocumentStore
from judge.formats.nuggets import read_nugget_banks
from judge.formats.reports import read_reports
from judge.formats.requests import read_requests

__all__ = ["DocumentStore", "citation_warnings", "input_warnings", "read_nugget_banks", "read_reports", "read_requests"]
