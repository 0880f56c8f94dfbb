"""`python -m agent_tui`: the same entry as the `agent-tui` command (`agent_tui.cli.entry`)."""

from agent_tui.cli.entry import run

run()
