"""`--batch` and `--batch-poll` as the commands that ask a model besides eval take them (nuggets create, nuggets
pool, calibrate), with eval's words; their bounds are judge.settings.SECONDS, as eval's and the API's."""

from __future__ import annotations

from typing import Annotated

import typer

from judge.cli import options

Batch = Annotated[bool, typer.Option(
    "--batch", help="Ask every decision not in the cache through the provider's batch jobs (about half the online "
    "price; answers within the provider's window), in rounds: openai, azure, hosted_vllm and litellm_proxy models "
    "(docs/batch.md). A killed command started again polls its jobs instead of paying twice.")]
BatchPoll = Annotated[float, options.number(
    "--batch-poll", bounds=options.SECONDS, metavar="SECONDS",
    help="With --batch: seconds between two looks at a running job.")]
