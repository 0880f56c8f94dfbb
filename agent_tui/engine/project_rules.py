"""A project's own rules file: used only while the user has accepted exactly its content.

A repository may ship `.agent-tui/permissions.json`. Cloning a repository must not grant it
permissions, so such a file is ignored until the user accepts it (the dashboard's question, or
`--trust-project-rules`). What was accepted is remembered as the SHA-256 of the file's bytes in
the user's own data (`AcceptedRules`), so a file that changes afterwards is ignored again until
it is accepted again.

Invariants:
- `ProjectRules.active` returns the file's rules only while its current bytes hash to the
  digest accepted for it; otherwise no rules (an absent, unaccepted or changed file);
- a file whose rules were in use and that becomes unreadable or invalid raises
  `PermissionRulesError` naming the file and the field (the caller denies the call it was
  deciding); one that was not in use is only reported in `state().problem`;
- `accept(digest)` records the digest only if the file still has it, so the user accepts what
  they were shown, never a file swapped in after;
- the acceptance file is plain JSON (`{"version": 1, "accepted": {KEY: SHA256}}`), written
  atomically; one that cannot be read counts as accepting nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

import orjson

from agent_tui.engine.permission_rules import (
    PermissionRule,
    PermissionRulesError,
    file_signature,
    parse_rules,
    write_document,
)

__all__ = ["AcceptedRules", "ProjectRules", "ProjectRulesState"]


@dataclass(frozen=True, slots=True)
class ProjectRulesState:
    """A project rules file as it is now.

    `digest` is None when there is no file; `problem` says why it cannot be used (then `rules`
    is empty); `accepted` is true when the user accepted exactly these bytes.
    """

    path: Path
    digest: str | None
    rules: tuple[PermissionRule, ...] = ()
    problem: str | None = None
    accepted: bool = False

    @property
    def needs_acceptance(self) -> bool:
        """A usable file the user has not accepted yet (what the dashboard asks about)."""
        return self.digest is not None and self.problem is None and not self.accepted


class AcceptedRules:
    """The digests of project rules files the user accepted, keyed by the file (user data)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def digest_for(self, key: str) -> str | None:
        accepted = self._read().get(key)
        return accepted if isinstance(accepted, str) else None

    def accept(self, key: str, digest: str) -> None:
        """Remember `digest` as accepted for `key` (replacing an earlier one).

        Raises:
            PermissionRulesError: the file cannot be written.
        """
        accepted = self._read()
        accepted[key] = digest
        write_document(self.path, {"version": 1, "accepted": accepted})

    def _read(self) -> dict[str, object]:
        try:
            document = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return {}
        accepted = document.get("accepted") if isinstance(document, dict) else None
        return dict(accepted) if isinstance(accepted, dict) else {}


class ProjectRules:
    """A project's `.agent-tui/permissions.json`, read when it changes.

    Args:
        path: the file (it may not exist).
        accepted: where the user's acceptances are kept.
        key: what the acceptance is recorded under (default: the file's resolved path); a
            scenario run reads a scratch copy but is keyed by the user's own file.
    """

    def __init__(self, path: Path, accepted: AcceptedRules, *, key: str | None = None) -> None:
        self.path = path
        self.accepted = accepted
        self.key = key if key is not None else str(path.resolve())
        self._signature: tuple[int, int, int, int] | None = None
        self._state = ProjectRulesState(path, None)
        self._in_use = False

    def state(self) -> ProjectRulesState:
        """The file as it is now (re-read when its size, time or inode changed), and whether the
        user accepted it."""
        signature = self._stat()
        if signature != self._signature or signature is None:
            self._state = self._read() if signature is not None else ProjectRulesState(self.path, None)
            self._signature = signature
        state = self._state
        accepted = state.digest is not None and self.accepted.digest_for(self.key) == state.digest
        if accepted != state.accepted:
            state = self._state = replace(state, accepted=accepted)
        return state

    def active(self) -> list[PermissionRule]:
        """The rules to apply now: the file's, if accepted; else none.

        Raises:
            PermissionRulesError: the file's rules were in use and it cannot be used any more.
        """
        state = self.state()
        if state.problem is not None and self._in_use:
            raise PermissionRulesError(self.path, state.problem)
        self._in_use = state.accepted and state.problem is None
        return list(state.rules) if self._in_use else []

    def accept(self, digest: str) -> bool:
        """Accept the file if its content still hashes to `digest`; False if it changed (or is
        not usable).

        Raises:
            PermissionRulesError: the acceptance cannot be written.
        """
        state = self.state()
        if state.digest != digest or state.problem is not None:
            return False
        self.accepted.accept(self.key, digest)
        return self.state().accepted

    def accept_current(self) -> ProjectRulesState:
        """Accept the file as it is now (`--trust-project-rules`); an absent file is left so.

        Raises:
            PermissionRulesError: the file exists but cannot be used, or the acceptance cannot
                be written.
        """
        state = self.state()
        if state.digest is None:
            return state
        if state.problem is not None:
            raise PermissionRulesError(self.path, state.problem)
        self.accept(state.digest)
        return self.state()

    def _stat(self) -> tuple[int, int, int, int] | None:
        try:
            return file_signature(self.path)
        except OSError:
            return None

    def _read(self) -> ProjectRulesState:
        try:
            raw = self.path.read_bytes()
        except OSError as error:
            return ProjectRulesState(self.path, "", problem=f"cannot read ({error.strerror})")
        digest = hashlib.sha256(raw).hexdigest()
        try:
            rules = parse_rules(self.path, raw)
        except PermissionRulesError as error:
            return ProjectRulesState(self.path, digest, problem=error.reason)
        return ProjectRulesState(self.path, digest, tuple(rules))
