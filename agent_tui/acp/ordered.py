"""`OrderedWriter`: one session's log writes, done one at a time in the order they were asked for.

The ACP SDK hands each incoming message to its own task, so two session updates can be in
flight at once; a turn's events must still reach the log in the order the agent sent them, and
a tool call's chain must never interleave with another write of the same call. Everything that
writes an ACP-backed session's events goes through its writer.

Invariants:
- `submit(work)` queues without awaiting, so a handler that submits first thing keeps the
  arrival order of its message; `run(work)` queues and waits for the result;
- works run strictly one after another, each to its end, in queue order;
- after `close()`, or when the consumer is gone (its task group was cancelled), `run` does the
  work inline rather than wait forever: closing writes (a turn's end) still happen.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

T = TypeVar("T")
Work = Callable[[], Awaitable[Any]]


class _WriterGone(Exception):
    """The consumer ended before it got to a job: the job's caller runs it inline."""


class _Job:
    __slots__ = ("done", "error", "result", "work")

    def __init__(self, work: Work) -> None:
        self.work = work
        self.done = anyio.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class OrderedWriter:
    """A queue of async works and the one consumer that runs them (`serve`, in a task group)."""

    def __init__(self) -> None:
        send, receive = anyio.create_memory_object_stream[_Job](math.inf)
        self._send: MemoryObjectSendStream[_Job] = send
        self._receive: MemoryObjectReceiveStream[_Job] = receive
        self._ended = False
        self._closed = False

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run queued works until `close()` (what is queued then still runs first)."""
        task_status.started()
        current: _Job | None = None
        try:
            async for current in self._receive:
                try:
                    current.result = await current.work()
                except Exception as error:
                    current.error = error
                current.done.set()
        finally:
            self._ended = True
            if current is not None and not current.done.is_set():  # cancelled half-way
                current.error = RuntimeError("the session's writer was cancelled")
                current.done.set()
            while True:
                try:
                    job = self._receive.receive_nowait()
                except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                    break
                job.error = _WriterGone()
                job.done.set()
            self._receive.close()

    def submit(self, work: Work) -> _Job | None:
        """Queue `work` (returns its job; None when the writer no longer takes work)."""
        if self._closed or self._ended:
            return None
        job = _Job(work)
        self._send.send_nowait(job)
        return job

    async def run(self, work: Callable[[], Awaitable[T]]) -> T:
        """Queue `work`, wait for it, and return its result (or raise its error)."""
        job = self.submit(work)
        if job is None:
            return await work()
        await job.done.wait()
        if isinstance(job.error, _WriterGone):
            return await work()
        if job.error is not None:
            raise job.error
        return job.result

    def close(self) -> None:
        """Accept no more work; the consumer ends after what is queued."""
        if not self._closed:
            self._closed = True
            self._send.close()
