"""The signals that stop a run, and how a run hears them: on its event loop, never mid-write.

Every front end stops the same way: the dashboard on SIGTERM and SIGHUP (Ctrl-C is a key
there), the headless `agent-tui run` and `agent-tui acp` on those and SIGINT. The signal is
handed to a callback on the running asyncio loop, which stops every turn (each writes its
`turn.completed{cancelled}`, its shell's process group is killed), closes the logs and removes
what the run made; then the process exits with `exit_status(number)`.

Invariants:
- the callback runs on the event loop, between two steps of the run, never inside a write;
- a signal the process was started with ignored (`nohup` for SIGHUP, a background job's SIGINT)
  stays ignored: nobody asked this process to stop on it;
- `listen_for_stop_signals` returns what undoes it: the handler the signal had before is back;
- `exit_status(number)` is 128 + number, what a shell reports for a process the signal ended
  (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterable

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""What stops a headless run."""
LEAVE_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGHUP)
"""What ends a dashboard run the way `q` does (SIGINT is the dashboard's own Ctrl-C key)."""


def exit_status(number: int) -> int:
    """The exit status of a run the signal `number` stopped: 128 + number."""
    return 128 + number


def said_stopped(number: int, fail: Callable[[str, int], object]) -> int:
    """Say with `fail(line, status)` which signal stopped the run (`interrupted`, `stopped by
    SIGTERM`); its exit status."""
    said = "interrupted" if number == signal.SIGINT else f"stopped by {signal_name(number)}"
    try:
        fail(said, exit_status(number))
    except OSError:  # stderr is gone with the terminal (SIGHUP)
        pass
    return exit_status(number)


def signal_name(number: int) -> str:
    """`SIGTERM` for 15."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def listen_for_stop_signals(
    callback: Callable[[int], object], numbers: Iterable[int] = STOP_SIGNALS
) -> Callable[[], None]:
    """Call `callback(number)` on the running event loop for each of `numbers` the process
    does not ignore; returns the undo (the handlers from before come back).

    Must be called from the main thread, inside a running asyncio loop.
    """
    loop = asyncio.get_running_loop()
    before: dict[int, object] = {}
    for number in numbers:
        previous = signal.getsignal(number)
        if previous is signal.SIG_IGN:
            continue
        before[number] = previous
        loop.add_signal_handler(number, callback, number)

    def undo() -> None:
        for number, previous in before.items():
            loop.remove_signal_handler(number)
            if callable(previous) or isinstance(previous, signal.Handlers):
                signal.signal(number, previous)
        before.clear()

    return undo


def listen_for_leave_signals(callback: Callable[[int], object]) -> Callable[[], None]:
    """`listen_for_stop_signals` for the dashboard: SIGTERM and SIGHUP (`LEAVE_SIGNALS`)."""
    return listen_for_stop_signals(callback, LEAVE_SIGNALS)
