"""The Textual dashboard (top floor): live view, approvals, stop controls and the replay scrubber.

It reaches the engine only through its public API (`ScenarioRun`, `SessionEngine.subscribe`,
`stop_subtree`, `cancel_turn`, `submit`, `engine.questions`) and folds every event with the
shared reducer. Entry points for the CLI: `agent_tui.tui.app.run_dashboard` and `agent_tui.tui.replay_app.run_replay`.
"""
