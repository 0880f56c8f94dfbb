"""The event sink: one outbound frame queue per session, fed by any module, read by one reader.

Invariants this module guarantees:
- per session there is at most one attachment; `attach` while attached *replaces* it: the old
  stream is closed exactly as by `detach` (its reader drains what was queued, then ends);
- `emit` is a plain, never-awaiting function, so sync code inside the event loop (the registry,
  a permission callback) can emit; frames of one session reach its stream, and every frame
  reaches the global listeners, in exactly the order `emit` was called (one total order across
  the `transition`, `event` and `fatal` families), even when a listener emits from inside its
  callback;
- an emit to a session that is not attached is dropped: it reaches no stream and no listener and
  is counted in `dropped`. So a turn's `start` must be sent after `attach`;
- a `FrameStream` carries one turn: it yields frames up to and including the first `end`
  transition and then ends (frames emitted after that, until the session is detached or
  re-attached, still reach the listeners but are not queued anywhere); it also ends after
  `detach`, once the reader has drained what was queued before it;
- the queue is unbounded: `emit` never blocks and never drops a frame of an attached session.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable

import anyio

from agent_tui.events.frames import Frame, FrameBody, is_turn_end

FrameListener = Callable[[Frame], None]

log = logging.getLogger(__name__)


class FrameStream:
    """The frames of one attachment, as an async iterator; the caller of `attach` is its reader.

    Use `async for frame in stream`, optionally inside `async with stream:` so leaving the block
    detaches the session (if this stream is still its attachment).
    """

    def __init__(self, sink: EventSink, session_id: str) -> None:
        self._sink = sink
        self.session_id = session_id
        self._queue: deque[Frame] = deque()
        self._accepting = True  # false once the end frame was queued or the stream was closed
        self._closed = False  # detached or replaced: no more frames will ever come
        self._finished = False  # the reader has seen the last frame
        self._wakeup: anyio.Event | None = None

    # -- called by the sink (sync, inside the event loop) --

    def _push(self, frame: Frame) -> None:
        if not self._accepting:
            return
        self._queue.append(frame)
        if is_turn_end(frame):
            self._accepting = False
        self._wake()

    def _close(self) -> None:
        self._accepting = False
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None

    # -- the reader's side --

    def __aiter__(self) -> FrameStream:
        return self

    async def __anext__(self) -> Frame:
        while not self._finished:
            if self._queue:
                frame = self._queue.popleft()
                if is_turn_end(frame):
                    self._finished = True
                return frame
            if self._closed or not self._accepting:
                self._finished = True
                break
            self._wakeup = anyio.Event()
            await self._wakeup.wait()
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Detach the session if this stream is still its attachment; the iteration then ends."""
        self._sink._detach_stream(self)

    async def __aenter__(self) -> FrameStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class EventSink:
    """Per-session frame queues plus global listeners (the dashboard, tests)."""

    def __init__(self) -> None:
        self._streams: dict[str, FrameStream] = {}
        self._listeners: list[FrameListener] = []
        self._dispatch_queue: deque[Frame] = deque()
        self._dispatching = False

    def is_attached(self, session_id: str) -> bool:
        return session_id in self._streams

    def attach(self, session_id: str) -> FrameStream:
        """Create the one queue for `session_id` and return its stream.

        If the session is already attached, the previous stream is closed (as by `detach`) and
        replaced: a turn always gets a fresh stream even if an earlier reader never finished.
        """
        previous = self._streams.pop(session_id, None)
        if previous is not None:
            previous._close()
        stream = FrameStream(self, session_id)
        self._streams[session_id] = stream
        return stream

    def detach(self, session_id: str) -> None:
        """End the session's stream; later emits to it are dropped. No-op when not attached."""
        stream = self._streams.pop(session_id, None)
        if stream is not None:
            stream._close()

    def _detach_stream(self, stream: FrameStream) -> None:
        if self._streams.get(stream.session_id) is stream:
            self.detach(stream.session_id)
        else:
            stream._close()

    def emit(self, session_id: str, body: FrameBody) -> bool:
        """Append `body` to the session's queue and show it to every listener.

        Args:
            session_id: the session the frame belongs to.
            body: a `Transition`, `RuntimeEvent` or `Fatal`.

        Returns:
            True if the session was attached; False if the frame was dropped.
        """
        frame = Frame.of(session_id, body)
        stream = self._streams.get(session_id)
        if stream is None:
            return False
        stream._push(frame)
        self._dispatch(frame)
        return True

    def subscribe(self, listener: FrameListener) -> Callable[[], None]:
        """Call `listener` synchronously for every frame emitted to an attached session.

        Returns:
            A function that unsubscribes the listener (calling it twice is harmless).
        """
        self._listeners.append(listener)

        def unsubscribe() -> None:
            try:
                self._listeners.remove(listener)
            except ValueError:
                pass

        return unsubscribe

    def _dispatch(self, frame: Frame) -> None:
        # A listener may emit; queueing instead of recursing keeps listeners in emit order.
        self._dispatch_queue.append(frame)
        if self._dispatching:
            return
        self._dispatching = True
        try:
            while self._dispatch_queue:
                current = self._dispatch_queue.popleft()
                for listener in tuple(self._listeners):
                    try:
                        listener(current)
                    except Exception:
                        # One broken viewer must not break the turn that emitted the frame.
                        log.exception("frame listener %r failed", listener)
        finally:
            self._dispatching = False
