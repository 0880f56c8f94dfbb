"""The hooks git knows: every event of githooks(5), and which of them run only when git writes.

Invariants:
- `HOOK_EVENTS` is every hook event git runs (githooks(5), the p4 ones included); agent-tui's own
  git turns each off and the repository check judges each, so a name added here reaches both;
- `WRITE_ONLY_HOOKS` are those git runs only for commands that are never `read` (commits,
  merges, checkouts, pushes, rebases, receiving); `fsmonitor-watchman` runs only when
  `core.fsmonitor` names it. The others (`post-index-change` whenever `git status` or `git diff`
  refreshes the index, `reference-transaction` on ref updates) can run for a `read`.
"""

from __future__ import annotations

from agent_tui.safety.shell_words import names

__all__ = ["HOOK_EVENTS", "WRITE_ONLY_HOOKS"]

WRITE_ONLY_HOOKS = names(
    "applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit prepare-commit-msg "
    "commit-msg post-commit pre-rebase post-checkout post-merge pre-push pre-receive update proc-receive "
    "post-receive post-update push-to-checkout pre-auto-gc post-rewrite sendemail-validate "
    "fsmonitor-watchman p4-changelist p4-prepare-changelist p4-post-changelist p4-pre-submit"
)
"""Hooks git runs only for commands that are never `read`."""

HOOK_EVENTS: tuple[str, ...] = (*sorted(WRITE_ONLY_HOOKS), "post-index-change", "reference-transaction")
"""Every hook event of githooks(5)."""
