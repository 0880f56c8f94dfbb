"""A second process that writes a stored session, for the tests of the store's one-writer lock.

Run from tests/ as `python -m store_writer SESSIONS_DIR SESSION_ID` (`Writer` starts one); it answers
one line per command on stdin, so a test drives two of them in step without sleeping:

- `read`: open the store afresh and read the session's last sequence (`last N`);
- `append K`: append K `model.delta` events after the sequence read last, as an engine that
  read the log earlier would (`wrote FIRST LAST`, `refused MESSAGE` or `error MESSAGE`);
- `claim`: take the session's lock without writing (`claimed`, or `refused MESSAGE`);
- `spawn`: start `sleep 600` letting it inherit every descriptor it can (`child PID`);
- `hold`: like `append 1`, then stop answering (the test kills it);
- `release`: close the store, letting go of the lock (`released`);
- `quit`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agent_tui.events import Event, payload_from
from agent_tui.store import JsonlFileEventStore, SessionLockedError


class Writer:
    """A `store_writer` process on one session, driven line by line."""

    def __init__(self, root: Path, session_id: str = "sess_test") -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "store_writer", str(root), session_id],
            cwd=Path(__file__).resolve().parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.pid = self.process.pid

    def send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def answer(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, f"writer {self.pid} ended (exit {self.process.poll()})"
        return line.rstrip("\n")

    def ask(self, command: str) -> str:
        self.send(command)
        return self.answer()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


def delta(session_id: str, sequence: int) -> Event:
    return Event(
        id=f"evt_{session_id}_{sequence}",
        session_id=session_id,
        turn_id="turn_1",
        sequence=sequence,
        ts="2026-12-01T10:02:00.000Z",
        type="model.delta",
        payload=payload_from("model.delta", {"text": f"from pid {os.getpid()} #{sequence}"}),
    )


def main() -> None:
    root, session_id = Path(sys.argv[1]), sys.argv[2]
    store = JsonlFileEventStore(root)
    last = 0

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def append(count: int) -> str:
        nonlocal last
        first = last + 1
        try:
            for sequence in range(first, first + count):
                store.log(session_id).append(delta(session_id, sequence))
                last = sequence
        except SessionLockedError as error:
            return f"refused {error}"
        except Exception as error:
            return f"error {type(error).__name__}: {error}"
        return f"wrote {first} {last}"

    for command in sys.stdin:
        words = command.split()
        if words[0] == "read":
            store.close()
            store = JsonlFileEventStore(root)
            last = store.last_sequence(session_id)
            say(f"last {last}")
        elif words[0] == "append":
            say(append(int(words[1])))
        elif words[0] == "claim":
            try:
                store.claim(session_id)
            except SessionLockedError as error:
                say(f"refused {error}")
            else:
                say("claimed")
        elif words[0] == "spawn":  # a child that keeps every descriptor it can (a tool's command)
            child = subprocess.Popen(["sleep", "600"], close_fds=False)
            say(f"child {child.pid}")
        elif words[0] == "hold":
            say(append(1))
            sys.stdin.read()  # until killed
        elif words[0] == "release":
            store.close()
            say("released")
        elif words[0] == "quit":
            break
    store.close()


if __name__ == "__main__":
    main()
