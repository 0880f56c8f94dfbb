"""The list of many logs read from their heads and tails by a child process, beside the app's
start-up.

Reading and folding the tails of thousands of logs takes about a second of one core, and the
app's start-up (importing Textual, composing the screen) about as much of the same core; a
thread would share it (the interpreter's lock). A `CatalogChild` reads the list in another
process, on the machine's other core: started by `agent-tui replay` before the app is imported
(or, else, by the screen when it opens), it hands back the list about when the first screen is
painted.

Invariants:
- the child is this interpreter (`sys.executable`, with `-P`: never the working directory's
  modules) importing this package from the directory the parent imported it from (put first on
  its path only when that directory is not on it already: a checkout, not an install); it reads the
  paths it is given (NUL-separated on its stdin) with `read_catalog` and writes the pickled
  catalog (`read_catalog(paths).lightened()`: the same entries, problems and state as
  `read_catalog(paths, tails=False).with_tails()`, once `Catalog.whole` has given a session's
  view its turns' texts) on its stdout, a pipe of ours;
- nothing but that stdout is unpickled: the child is our own process reading the logs as the
  parent would (the same `plain_descriptor` opens, the same `FILE: reason` problems); it
  inherits no descriptor but its three (stderr goes nowhere: a traceback would draw over the
  screen);
- a child never outlives its owner: `close` (the screen's stop, the CLI's `with`) kills and reaps
  it; a parent killed outright leaves it a broken pipe at its one write, a second of work later;
- `result()` is None when the child could not give the list (it could not start, was closed,
  exited otherwise than 0, wrote what is not a catalog): the caller reads the tails itself
  (`Catalog.with_tails`), which says the same problems.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when needed: `agent-tui replay` starts the child before the reducer loads
    from agent_tui.replay.catalog import Catalog

LIST_FROM = 64
"""Over more logs than this, the replay opens on their list (read from each log's head and
tail) and the scrubber's timeline covers the chosen session's family (`Catalog.family`)."""

CHILD_EXIT_SECONDS = 5.0
"""How long a child that has written its list may take to exit before it is killed."""
CHILD_NICENESS = 5
"""How much the child lowers its scheduling priority (`os.nice`): on a machine with a core to
spare it changes nothing, on a busy one the app's start-up (the first screen) comes first."""
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent.parent)
"""The directory this package was imported from: the child imports the same one."""
_CHILD_CODE = (
    # An installed package's directory is on the path already, after the standard library's:
    # put first, it would let a stray module there shadow a standard one in the child.
    "import sys; sys.argv[1] in sys.path or sys.path.insert(0, sys.argv[1]); "
    "from agent_tui.replay.catalog_child import child_main; child_main()"
)


class CatalogChild:
    """A child process reading `paths`' list from their heads and tails (see the module
    docstring); started when made.

    Args:
        paths: the logs, in the order the list takes them.
    """

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = tuple(paths)
        self._lock = threading.Lock()
        self._closed = False
        self._process: subprocess.Popen[bytes] | None = None
        if getattr(sys, "frozen", False):  # a bundled app: its executable is not an interpreter
            return
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-P", "-c", _CHILD_CODE, _PACKAGE_ROOT],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            return
        # Sent from a thread: the pipe holds 64 KiB, thousands of paths more, and the child reads
        # them only once its interpreter is up (the caller goes on starting the app meanwhile).
        names = b"\0".join(os.fsencode(path) for path in self.paths)
        threading.Thread(target=self._send, args=(names,), name="catalog-child-paths", daemon=True).start()

    def _send(self, names: bytes) -> None:
        process = self._process
        assert process is not None and process.stdin is not None
        try:
            process.stdin.write(names)
        except (OSError, ValueError):  # the child is gone (closed, or failed): `result` says None
            pass
        finally:
            with contextlib.suppress(OSError):
                process.stdin.close()

    def result(self) -> Catalog | None:
        """The list the child read (waiting for it), or None if it could not give it; once."""
        process = self._process
        if process is None or process.stdout is None:
            return None
        try:
            data = process.stdout.read()
            process.wait(timeout=CHILD_EXIT_SECONDS)  # at its stdout's end, it is exiting
        except (OSError, ValueError, subprocess.TimeoutExpired):
            data = b""
        finally:
            self.close()
        if process.returncode != 0 or not data:
            return None
        from agent_tui.replay.catalog import Catalog

        try:
            catalog = pickle.loads(data)
        except Exception:  # a child that died mid-write: read the tails here instead
            return None
        return catalog if isinstance(catalog, Catalog) else None

    def close(self) -> None:
        """Stop the child if it is still running, and reap it."""
        with self._lock:
            process = self._process
            if process is None or self._closed:
                return
            self._closed = True
            if process.poll() is None:
                process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()

    @property
    def running(self) -> bool:
        """Whether the child process is still running."""
        return self._process is not None and self._process.poll() is None

    def __enter__(self) -> CatalogChild:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def start_listing(paths: Sequence[Path]) -> CatalogChild | None:
    """A child reading the list of `paths` when there are enough of them to be listed (more than
    `LIST_FROM`); None otherwise."""
    return CatalogChild(paths) if len(paths) > LIST_FROM else None


def child_main() -> None:
    """The child's work: the paths on stdin, the pickled catalog on stdout."""
    import gc

    from agent_tui.replay.catalog import read_catalog

    gc.disable()  # what it reads holds no cycles, and it lives a second
    # Behind the app's start-up when the cores are busy: the first screen is painted first.
    os.nice(CHILD_NICENESS)
    names = sys.stdin.buffer.read()
    paths = [Path(os.fsdecode(name)) for name in names.split(b"\0")] if names else []
    catalog = read_catalog(paths)
    try:
        # Without the turns' texts, which only the detail shows (`Catalog.whole`): a fifth of the
        # bytes, and most of the objects, to pickle here and unpickle in the parent.
        light = catalog.lightened()
        sys.stdout.buffer.write(pickle.dumps(light, protocol=pickle.HIGHEST_PROTOCOL))
        sys.stdout.buffer.flush()
    except BrokenPipeError:  # the parent is gone or closed us: nobody to tell
        os._exit(1)
