"""The Agent Client Protocol, both ways: external agents as sessions, and our engine as an agent.

- `AcpAgents` / `AcpAgentSession` (`agents.py`, `client.py`): run an external ACP agent
  (Claude Code, Codex, Gemini CLI through their adapters) as a subprocess and write everything
  it does into our log, with its questions in our approval queue;
- `agent-tui acp` (`server.py`): serve our engine to an ACP client (Zed, Toad);
- `mapping.py`: the vocabulary of both directions (see `docs/acp.md`);
- `config.py`: the `[acp.NAME]` tables of the config file.

Everything here speaks ACP through the `agent-client-protocol` SDK (its schema models and its
JSON-RPC connection); nothing below `tui/` is imported.
"""
