"""What the tests of a named pipe put in a log's place share: a call made in a thread that must
not wait for a writer on the pipe."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


def returns_without_waiting(call: Callable[[], Any], fifo: Path) -> list[Any]:
    """`call()` in a thread: a list of what it returned, failing if it waits on the pipe `fifo`
    (a writer end frees the waiting thread before the test fails)."""
    returned: list[Any] = []
    thread = threading.Thread(target=lambda: returned.append(call()), daemon=True)
    thread.start()
    thread.join(timeout=30)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join()
        raise AssertionError(f"it waited for a writer on the pipe {fifo}")
    return returned
