"""What the dashboard may use of the engine and the runtime: this module is the whole surface.

The TUI (`agent_tui/tui/`) imports from the engine, the turn registry and the runtime only
through the names below; the rest of those packages may change shape without the dashboard
noticing. The reducer, the replay and the event schema, which the dashboard also reads, are
imported through their packages (`agent_tui.reducer`, `agent_tui.replay`, `agent_tui.events`).
`tests/test_tui_surface.py` holds the TUI to this.

Invariants:
- nothing here imports Textual: the ports are plain Python, usable by any front end (a second
  UI, a test) the same way;
- every name is re-exported unchanged (no wrappers, no second name for one thing), so a type
  seen through this module is the very type the engine and the runtime use.

The groups:
- permissions: a question (`PermissionRequest`) waits in `engine.questions` (`Questions`)
  until someone answers it (`PermissionAnswer`) from the approval queue; an external (ACP) agent's question is an
  `AcpPermissionRequest` carrying the agent's own `AgentOption`s, and an `AcpPermissionAnswer`
  picks one; a rules file the project ships waits for the user's acceptance
  (`ProjectRulesState`, its `PermissionRule`s; `Workbench.accept_project_rules`);
- commands: every control action is a `Command` (`StopSubtree`, `StopAll`, `FollowUp`,
  `Answer`, `NewAgent`, `SetBudget`, `Close`, `AcceptProjectRules`, ...) given through a
  `CommandClient` and answered by a `Reply`; the local run's client is a `CommandExecutor`;
- steering: a running turn accepts more input (`Attached`) or there is none (`NoActiveTurn`);
- the workbench: starting agents (`AgentSpec`, `AgentStartError`), sending them text (`Sent`,
  `SendRefused`), the model to run them on (`ModelChoice`), or the external agents that run
  some of them instead (`ExternalAgents`, ACP agents of the config file), and what the loaded
  config file gives it: prices (`PriceTable`) and MCP servers (`McpServerConfig`);
- budgets: what a session's tree may spend (`BudgetLimit`, also `AgentSpec.budget`), set or
  raised with `Workbench.set_budget` (a `BudgetRefused` says why not); how near a tree is to
  its budget (`budget_state`: ok, near or over);
- the demo: a scenario (`load_scenario`, `demo_scenario_path`) played by a `ScenarioRun`,
  which returns a `RunResult`;
- leaving: SIGTERM and SIGHUP end a run the way `q` does, heard on the event loop
  (`listen_for_leave_signals`, the mechanism the headless commands use for theirs), and the
  exit status a signal gives (`exit_status`);
- changes on disk: a proposed write or edit as a diff (`preview_change`, or `preview_asked` of
  the arguments alone where the file is not here, `ChangePreview`,
  `DiffLine`), and a session's git worktree (`repo_root`, `uncommitted_changes`,
  `WorktreeError`);
- finishing the work, by commands like any other action: a session's whole change
  (`ReadReview` → `Review` of `ReviewFile`s), committed (`Commit` → `CommitResult`), merged
  (`Merge` → `MergeResult`) or discarded (`Discard`); a turn rewound (`Turns` → `TurnFacts`,
  `PlanRewind` → `RewindPlan`, `Rewind` → `RewindResult`); a closed session reopened (`Closed` →
  `StoredSession`s, `Reopen`); each result read from its `Reply` by `read_result` (`Adapters`),
  every refusal a `FinishRefused`;
- exports: a session tree written as a document (`write_export`, `ExportFailed`) into the user's
  exports directory (`exports_dir`);
- search across sessions: the word index of a directory of logs (`SearchIndex` at
  `index_path(DIR)`, its `Progress`, `SearchResults` of `Hit`s, `QueryError`, `SearchError`;
  what each log spent, `logs_spend`),
  the line of a hit to show (`excerpt`);
- attached to a bus (`agent-tui attach`): every host's sessions and controls (`AttachedBus`,
  at a `BusTarget` that `resolve_target` finds, else `BusUnreachable`), its hosts (`HostView`),
  where a read of the stream begins
  (`StartAt`); these load the bus (and `nats-py`) when first used, never before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_tui.events.lazy_names import lazy_names

if TYPE_CHECKING:
    from agent_tui.bus.attach import AttachedBus, HostView
    from agent_tui.bus.attach_target import BusTarget, BusUnreachable, resolve_target
    from agent_tui.bus.consumer import StartAt
    from agent_tui.costs.budgets import BudgetLimit, budget_share, budget_state, tokens_problem
    from agent_tui.costs.prices import PriceTable
    from agent_tui.demo import demo_scenario_path
    from agent_tui.engine.permissions import (
        PermissionAnswer,
        PermissionRequest,
        PermissionRule,
        PermissionRulesError,
    )
    from agent_tui.engine.project_rules import ProjectRulesState
    from agent_tui.engine.questions import Questions
    from agent_tui.engine.scenario import load_scenario
    from agent_tui.export import ExportFailed, write_export
    from agent_tui.mcp.config import McpServerConfig
    from agent_tui.runtime.agent_requests import AgentSpec, AgentStartError, BudgetRefused, SendRefused, Sent
    from agent_tui.runtime.change_preview import ChangePreview, DiffLine, preview_asked, preview_change
    from agent_tui.runtime.command_executor import Adapters, CommandExecutor, read_result
    from agent_tui.runtime.commands import (
        AcceptProjectRules,
        Answer,
        Close,
        Closed,
        Command,
        CommandClient,
        Commit,
        Discard,
        FollowUp,
        Merge,
        NewAgent,
        PlanRewind,
        ReadReview,
        Reopen,
        Reply,
        Rewind,
        SetBudget,
        StopAll,
        StopSubtree,
        Turns,
    )
    from agent_tui.runtime.external_agents import (
        AcpPermissionAnswer,
        AcpPermissionRequest,
        AgentOption,
        ExternalAgents,
    )
    from agent_tui.runtime.finishing import FinishRefused, TurnFacts
    from agent_tui.runtime.model_router import ModelChoice
    from agent_tui.runtime.notify_command import NotifyCommand
    from agent_tui.runtime.review import CommitResult, MergeResult, Review, ReviewFile
    from agent_tui.runtime.rewind import PlannedFile, RewindPlan, RewindResult
    from agent_tui.runtime.runner import RunResult, ScenarioRun
    from agent_tui.runtime.session_dirs import StoredSession, exports_dir
    from agent_tui.runtime.stop_signals import exit_status, listen_for_leave_signals
    from agent_tui.runtime.workbench import TerminalFinder, Workbench
    from agent_tui.runtime.worktrees import WorktreeError, repo_root, uncommitted_changes
    from agent_tui.search import (
        Hit,
        Progress,
        QueryError,
        SearchError,
        SearchIndex,
        SearchResults,
        excerpt,
        index_path,
        logs_spend,
    )
    from agent_tui.terminal.agents import TerminalAgents, hook_socket
    from agent_tui.turns import Attached, NoActiveTurn

# Each name is imported from the module above when first used: a dashboard that replays logs never
# loads the engine or the runtime, one that attaches to nothing never loads the bus and `nats-py`.
__getattr__, __dir__ = lazy_names(__name__, __file__)

__all__ = [
    "AcceptProjectRules",
    "AcpPermissionAnswer",
    "AcpPermissionRequest",
    "Adapters",
    "AgentOption",
    "AgentSpec",
    "AgentStartError",
    "Answer",
    "Attached",
    "AttachedBus",
    "BudgetLimit",
    "BudgetRefused",
    "BusTarget",
    "BusUnreachable",
    "ChangePreview",
    "Close",
    "Closed",
    "Command",
    "CommandClient",
    "CommandExecutor",
    "Commit",
    "CommitResult",
    "DiffLine",
    "Discard",
    "ExportFailed",
    "ExternalAgents",
    "FinishRefused",
    "FollowUp",
    "Hit",
    "HostView",
    "McpServerConfig",
    "Merge",
    "MergeResult",
    "ModelChoice",
    "NewAgent",
    "NoActiveTurn",
    "NotifyCommand",
    "PermissionAnswer",
    "PermissionRequest",
    "PermissionRule",
    "PermissionRulesError",
    "PlanRewind",
    "PlannedFile",
    "PriceTable",
    "Progress",
    "ProjectRulesState",
    "QueryError",
    "Questions",
    "ReadReview",
    "Reopen",
    "Reply",
    "Review",
    "ReviewFile",
    "Rewind",
    "RewindPlan",
    "RewindResult",
    "RunResult",
    "ScenarioRun",
    "SearchError",
    "SearchIndex",
    "SearchResults",
    "SendRefused",
    "Sent",
    "SetBudget",
    "StartAt",
    "StopAll",
    "StopSubtree",
    "StoredSession",
    "TerminalAgents",
    "TerminalFinder",
    "TurnFacts",
    "Turns",
    "Workbench",
    "WorktreeError",
    "budget_share",
    "budget_state",
    "demo_scenario_path",
    "excerpt",
    "exit_status",
    "exports_dir",
    "hook_socket",
    "index_path",
    "listen_for_leave_signals",
    "load_scenario",
    "logs_spend",
    "preview_asked",
    "preview_change",
    "read_result",
    "repo_root",
    "resolve_target",
    "tokens_problem",
    "uncommitted_changes",
    "write_export",
]
