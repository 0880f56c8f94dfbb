"""How an OS error is said to a person: the system's own words for its number.

Invariants:
- `os_reason` prefers `os.strerror(errno)` ("No space left on device") over whatever text the
  raiser attached ("short write to FILE", shown as "[Errno 28] short write to FILE"), and falls
  back to that text only when there is no number;
- it never returns an empty string.
"""

from __future__ import annotations

import os


def os_reason(error: OSError) -> str:
    """Why `error` happened, in the system's words."""
    if error.errno:
        try:
            return os.strerror(error.errno)
        except ValueError:
            pass
    return error.strerror or str(error) or type(error).__name__


def store_failure(error: BaseException) -> str:
    """A failed store (`EventStoreFailure`) in one line: what failed, and the OS's reason in its
    own words."""
    cause = error.__cause__
    return f"{error} ({os_reason(cause) if isinstance(cause, OSError) else cause})"
