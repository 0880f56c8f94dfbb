"""Terminal agents: Claude Code and Codex sessions run in the user's own terminals.

Their transcripts are followed into the tree, their permission prompts reach the one approval
queue through the CLIs' own hooks, and what agent-tui answered is kept in its own store.

This package's `__init__` imports nothing: the hook (`hook_client`) runs once per tool call in
the user's agent, so its start-up is the agent's latency.
"""
