"""The roles of docs/remote.md ("Subject permissions") as a server runs them: the recipe is read
out of the document itself (its `conf` block holding `authorization`), so what the tests hold
the server to is exactly what the document tells an administrator to write. Its passwords are
the variables the block names (`$ANA_PASSWORD`, …), defined here ahead of it."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "remote.md"
USERS = ("buildbox", "prod", "ana", "bob", "watch")
"""The block's users: two hosts, an operator of every host, an operator of `buildbox` only
(who may only watch `prod`), and a watcher."""


def password(user: str) -> str:
    return f"{user}-pa55-that-must-never-show"


def documented_authorization() -> str:
    """The `authorization { … }` block of docs/remote.md."""
    blocks = re.findall(r"```conf\n(.*?)```", DOC.read_text(), re.DOTALL)
    found = [block for block in blocks if block.lstrip().startswith("authorization")]
    assert len(found) == 1, f"docs/remote.md should hold one `conf` block with the roles, not {len(found)}"
    return found[0]


def roles_config(extra: str = "") -> str:
    """A server config: the passwords, then the documented roles, then `extra` (TLS)."""
    variables = "".join(f'{user.upper()}_PASSWORD: "{password(user)}"\n' for user in USERS)
    return variables + documented_authorization() + extra
