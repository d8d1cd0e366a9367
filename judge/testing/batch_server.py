"""A fake provider batch API on 127.0.0.1, for tests and benchmarks of `eval --batch`.

It speaks the OpenAI Files and Batches protocol that litellm's `acreate_file`, `acreate_batch`, `aretrieve_batch`,
`acancel_batch` and `afile_content` use:

- ``POST /v1/files`` (multipart: ``purpose``, ``file``), ``GET /v1/files/{id}/content``;
- ``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window``), ``GET /v1/batches/{id}``,
  ``POST /v1/batches/{id}/cancel``.

``POST /v1/chat/completions`` is passed through to the chat endpoint, so one ``api_base`` serves a run online and in
batch, as a provider's does. Each request line of a batch is answered by a real chat-completions call to a
:class:`FakeEndpoint` (its responders, faults, log-probabilities and accounting all apply), so a batch run and an
online run against the same endpoint get the same answers. What a provider's batch does that an online call does not
is the server's own to simulate::

    with FakeEndpoint() as chat, FakeBatchServer(chat, turnaround=0.2) as batches:
        batches.fail_ids(lambda custom_id: custom_id.endswith("7"))   # those lines land in the error file
        batches.expire_next(1)                                       # the next job expires half done
        argue-judge eval ... --model openai/fake --api-base {batches.api_base} --batch --batch-poll 0.05

``turnaround`` is how long a job stays ``in_progress`` before it completes (a slow provider); ``submitted``,
``lines_served`` and ``cancelled`` count what happened; ``jobs`` keeps each job's final state.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import ThreadingHTTPServer
from typing import Any, Self

from judge.testing.endpoint import FakeEndpoint
from judge.testing.server import ChatHandler


@dataclass
class _Job:
    id: str
    input_file_id: str
    endpoint: str
    created_at: int
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    total: int = 0
    cancel: threading.Event = field(default_factory=threading.Event)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "object": "batch", "endpoint": self.endpoint, "errors": None,
                "input_file_id": self.input_file_id, "completion_window": "24h", "status": self.status,
                "output_file_id": self.output_file_id, "error_file_id": self.error_file_id,
                "created_at": self.created_at, "in_progress_at": None, "expires_at": None, "finalizing_at": None,
                "completed_at": None, "failed_at": None, "expired_at": None, "cancelling_at": None,
                "cancelled_at": None, "request_counts": {"total": self.total, "completed": self.completed,
                                                         "failed": self.failed}, "metadata": None}


class _BatchServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeBatchServer


class _BatchHandler(ChatHandler):
    server: _BatchServer

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        fake = self.server.fake
        parts = self.path.split("?")[0].strip("/").split("/")
        if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
            content = fake._file(parts[2])
            if content is None:
                self.send_json(404, {"error": {"message": f"no file {parts[2]}", "type": "invalid_request_error"}})
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)
            return
        if parts[:2] == ["v1", "files"] and len(parts) == 3:
            content = fake._file(parts[2])
            if content is None:
                self.send_json(404, {"error": {"message": f"no file {parts[2]}", "type": "invalid_request_error"}})
                return
            self.send_json(200, fake._file_object(parts[2], len(content)))
            return
        if parts[:2] == ["v1", "batches"] and len(parts) == 3:
            job = fake._job(parts[2])
            if job is None:
                self.send_json(404, {"error": {"message": f"no batch {parts[2]}", "type": "invalid_request_error"}})
                return
            self.send_json(200, job.as_json())
            return
        self.send_json(404, {"error": {"message": f"unknown path {self.path}", "type": "invalid_request_error"}})

    def do_POST(self) -> None:  # noqa: N802
        fake = self.server.fake
        parts = self.path.split("?")[0].strip("/").split("/")
        body = self._read_body()
        if parts == ["v1", "chat", "completions"]:
            # One address for both, as a provider has: online calls go straight through to the chat endpoint.
            status, answer = fake._chat(json.loads(body or b"{}"))
            self.send_json(status, answer)
            return
        if parts == ["v1", "files"]:
            message = BytesParser(policy=HTTP).parsebytes(
                b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + body)
            upload = next((p for p in message.iter_parts() if p.get_param("name", header="content-disposition")
                           == "file"), None)
            if upload is None:
                self.send_json(400, {"error": {"message": "no file part", "type": "invalid_request_error"}})
                return
            self.send_json(200, fake._add_file(upload.get_payload(decode=True) or b""))
            return
        if parts == ["v1", "batches"]:
            request = json.loads(body or b"{}")
            job = fake._submit(request["input_file_id"], request.get("endpoint", "/v1/chat/completions"))
            if job is None:
                self.send_json(400, {"error": {"message": "unknown input_file_id", "type": "invalid_request_error"}})
                return
            self.send_json(200, job.as_json())
            return
        if parts[:2] == ["v1", "batches"] and len(parts) == 4 and parts[3] == "cancel":
            job = fake._job(parts[2])
            if job is None:
                self.send_json(404, {"error": {"message": f"no batch {parts[2]}", "type": "invalid_request_error"}})
                return
            fake._cancel(job)
            self.send_json(200, job.as_json())
            return
        self.send_json(404, {"error": {"message": f"unknown path {self.path}", "type": "invalid_request_error"}})


class FakeBatchServer:
    """The batch API over `chat` (a running FakeEndpoint). See the module docstring."""

    def __init__(self, chat: FakeEndpoint, *, turnaround: float = 0.05):
        self.chat = chat
        self.turnaround = turnaround
        self._lock = threading.Lock()
        self._files: dict[str, bytes] = {}
        self._jobs: dict[str, _Job] = {}
        self._fail: Callable[[str], bool] = lambda _custom_id: False
        self._expire = 0
        self._count = 0
        self.lines_served = 0
        self._server: _BatchServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> Self:
        server = _BatchServer(("127.0.0.1", 0), _BatchHandler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="fake-batch-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            for job in self._jobs.values():
                job.cancel.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def api_base(self) -> str:
        assert self._server is not None, "start() the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # -- scenarios ---------------------------------------------------------------------------------------------
    def fail_ids(self, predicate: Callable[[str], bool]) -> None:
        """Lines whose custom_id satisfies `predicate` go to the job's error file (a partially failed job)."""
        self._fail = predicate

    def expire_next(self, jobs: int = 1) -> None:
        """The next `jobs` jobs expire after answering the first half of their lines (the rest: error file,
        code ``batch_expired``), as a provider's 24 h window does."""
        self._expire += jobs

    # -- accounting --------------------------------------------------------------------------------------------
    @property
    def submitted(self) -> int:
        return len(self._jobs)

    @property
    def jobs(self) -> list[dict[str, Any]]:
        with self._lock:
            return [job.as_json() for job in self._jobs.values()]

    @property
    def cancelled(self) -> int:
        return sum(job["status"] == "cancelled" for job in self.jobs)

    # -- protocol ----------------------------------------------------------------------------------------------
    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._count += 1
            return f"{prefix}-{self._count:06d}"

    def _add_file(self, content: bytes) -> dict[str, Any]:
        file_id = self._next_id("file")
        with self._lock:
            self._files[file_id] = content
        return self._file_object(file_id, len(content))

    def _file_object(self, file_id: str, size: int) -> dict[str, Any]:
        return {"id": file_id, "object": "file", "bytes": size, "created_at": int(time.time()),
                "filename": f"{file_id}.jsonl", "purpose": "batch", "status": "processed"}

    def _file(self, file_id: str) -> bytes | None:
        with self._lock:
            return self._files.get(file_id)

    def _job(self, batch_id: str) -> _Job | None:
        with self._lock:
            return self._jobs.get(batch_id)

    def _submit(self, input_file_id: str, endpoint: str) -> _Job | None:
        content = self._file(input_file_id)
        if content is None:
            return None
        job = _Job(self._next_id("batch"), input_file_id, endpoint, int(time.time()))
        lines = [json.loads(line) for line in content.decode().splitlines() if line.strip()]
        job.total = len(lines)
        with self._lock:
            self._jobs[job.id] = job
            expires = self._expire > 0
            self._expire -= int(expires)
        threading.Thread(target=self._run, args=(job, lines, expires), daemon=True).start()
        return job

    def _cancel(self, job: _Job) -> None:
        with self._lock:
            if job.status in ("validating", "in_progress"):
                job.status = "cancelling"
        job.cancel.set()

    def _run(self, job: _Job, lines: list[dict[str, Any]], expires: bool) -> None:
        with self._lock:
            if job.status == "validating":
                job.status = "in_progress"
        if job.cancel.wait(self.turnaround):
            with self._lock:
                job.status = "cancelled"
            return
        answered = lines[: len(lines) // 2] if expires else lines
        outputs, errors = [], []
        for line in answered:
            custom_id = line["custom_id"]
            if self._fail(custom_id):
                errors.append({"id": f"req-{custom_id}", "custom_id": custom_id, "response": None,
                               "error": {"code": "server_error", "message": "the fake batch failed this line"}})
                continue
            status, body = self._chat(line["body"])
            self.lines_served += 1
            outputs.append({"id": f"req-{custom_id}", "custom_id": custom_id,
                            "response": {"status_code": status, "request_id": custom_id, "body": body},
                            "error": None})
        for line in lines[len(answered):]:
            errors.append({"id": f"req-{line['custom_id']}", "custom_id": line["custom_id"], "response": None,
                           "error": {"code": "batch_expired", "message": "the batch expired before this line"}})
        output_id = self._add_file("".join(json.dumps(o) + "\n" for o in outputs).encode())["id"]
        error_id = self._add_file("".join(json.dumps(e) + "\n" for e in errors).encode())["id"] if errors else None
        with self._lock:
            job.output_file_id, job.error_file_id = output_id, error_id
            job.completed = sum(o["response"]["status_code"] == 200 for o in outputs)
            job.failed = len(lines) - job.completed
            job.status = "expired" if expires else "completed"

    def _chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(f"{self.chat.api_base}/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # 127.0.0.1 only
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")
