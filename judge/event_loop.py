"""Run a coroutine to completion from synchronous code, whether or not an event loop is already running.

`asyncio.run` refuses to start inside a running loop, which is where a notebook cell runs (Jupyter's kernel has
one). There the coroutine runs in a thread of its own with its own loop, and the caller's thread waits for it:
the cell blocks as any synchronous call does, and the notebook's loop is left alone. Outside a loop it is
`asyncio.run`. Every synchronous entry point that drives async code (the Python API, eval, calibrate, the LLM
reader baseline) goes through here, so none of them breaks in a notebook.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(awaitable: Awaitable[T]) -> T:
    """The awaitable's result (or its exception, raised in the caller's thread)."""
    async def wrap() -> T:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrap())
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["value"] = asyncio.run(wrap())
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=worker, name="argue-judge-run-sync")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
