"""The help screen: the keys, and what phases, statuses and risks mean.

Each row is a label column and a description column, so a description too long for a narrow
terminal wraps under itself, never under the keys.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from agent_tui.tui.formatting import MUTED, PHASE_STYLE, RISK_STYLE, STATUS_GLYPH, STATUS_STYLE

KEY = "bold $text-accent"

_KEYS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "Everywhere",
        [
            ("↑ ↓ enter", "move in the tree, the detail or the approval queue"),
            ("tab shift+tab", "next / previous panel"),
            ("a", "approval queue, oldest first; again: open it"),
            ("A", "open the next waiting request, from anywhere (in the composer: right after a send)"),
            ("/", "filter the tree by name, prompt or directory (esc clears)"),
            ("S", "state filter: needs me, running, failed, all"),
            ("f", "follow: keep the newest line in view (replay: tail the logs)"),
            ("W", "long lines in the detail whole (wrapped) or cut with … (again: back)"),
            ("ctrl+p", "command palette: jump to, stop or close a session, themes, …"),
            ("N", "notices: every notification of this run, whole"),
            ("$", "spend chart: what the selected tree spent over time, per agent"),
            ("? f1", "this help (in a text box, where ? and q type: f1, ctrl+q)"),
            ("q ctrl+q", "quit (asks while agents run); running turns are logged as cancelled"),
        ],
    ),
    (
        "Live dashboard",
        [
            ("n", "new agent: prompt, directory, model, budget, own git worktree"),
            ("i", "talk to the selected session (the composer under the detail)"),
            ("enter", "in the composer: steer the running turn, or start the next one"),
            ("shift+enter", "in the composer: a new line (also ctrl+j)"),
            ("x", "stop the selected agent and everything it spawned"),
            ("X", "stop every session (asks first)"),
            ("delete", "close the selected session (asks; its worktree too)"),
            ("D", "review its whole change: commit, merge, discard, rewind a turn"),
            ("O", "reopen a closed session"),
            ("R", "review the rules file the project ships (ignored until accepted)"),
            ("F", "search what was said in any session; enter opens that event"),
            ("B", "budget of the selected session's tree: set, raise or remove"),
        ],
    ),
    (
        "Approval",
        [
            ("y", "allow once"),
            ("s", "allow for this session (same tool, same kind of call)"),
            ("!", "always allow (saved in your own rules for the project)"),
            ("n", "deny"),
            ("esc", "close without answering; the agent keeps waiting"),
        ],
    ),
    (
        "Replay",
        [
            ("← →", "one event back / forward (with a filter: one match)"),
            ("shift+← → pgup pgdn", "100 events back / forward"),
            ("home end", "first / last event"),
            ("] [", "next / previous turn start"),
            ("c C  p P  e E", "next / previous compression, approval, failure or corrupt line"),
            ("g", "go to a time (22:17:05), a sequence (57, explorer:57) or a position (#1200)"),
            ("/", "filter: words, session:NAME, type:tool.failed, tool:shell; esc clears it"),
            ("space", "play / pause"),
            ("+ -", "play faster / slower"),
            ("f", "tail the logs; the cursor stays at the end"),
        ],
    ),
]

_PHASES = {
    "start": "the turn began: prompt stored, no model call yet",
    "executing": "a model call (step) is building context, streaming or running tools",
    "compress": "the context was too big and is being compacted before the call",
    "end": "the turn is over (see its status)",
}
_STATUSES = {
    "idle": "no turn yet",
    "running": "a turn is under way",
    "completed": "the last turn ended with a final answer (or the step limit)",
    "cancelled": "the last turn was stopped",
    "failed": "the last turn ended in an error (provider, context, store)",
}
_RISKS = {
    "read": "reads files or lists them; allowed by default",
    "write": "writes or edits files in the session's workspace; asks",
    "execute": "runs a program or starts a sub-agent; asks",
    "network": "reaches the network; asks",
    "destructive": "deletes, moves over, truncates or rewrites history; asks, with a warning",
}


Row = tuple[Content, Content, bool] | Content
"""A heading or note (one Content), or (label, description, is_key): keys get a wider label."""


def _rows() -> list[Row]:
    """The help, top to bottom."""
    rows: list[Row] = []
    for title, keys in _KEYS:
        rows.append(Content.styled(title, "bold underline"))
        rows += [(Content.styled(key, KEY), Content(what), True) for key, what in keys]
        rows.append(Content(""))
    statuses = {f"{STATUS_GLYPH[status]} {status}": STATUS_STYLE[status] for status in _STATUSES}
    vocabularies = (
        ("Phases (the badge after a session's name)", _PHASES, PHASE_STYLE),
        ("Statuses", dict(zip(statuses, _STATUSES.values(), strict=True)), statuses),
        ("Risks (what a tool call may do)", _RISKS, RISK_STYLE),
    )
    for title, words, styles in vocabularies:
        rows.append(Content.styled(title, "bold underline"))
        rows += [(Content.styled(word, styles[word]), Content(what), False) for word, what in words.items()]
        rows.append(Content(""))
    rows.append(
        Content.styled(
            "A tree line reads: status, name (⎇: own worktree), ⚑ approvals waiting (⚑2: two) "
            "and for how long, phase, and how long the current or last turn took.",
            MUTED,
        )
    )
    return rows


class HelpScreen(ModalScreen[None]):
    """Keys and vocabulary; any of escape, q, ? or f1 closes it."""

    BINDINGS = [
        Binding("escape,q,question_mark,f1", "dismiss", "Close"),
        Binding("A", "app.next_approval", "Next request", show=False),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog") as dialog:
            dialog.border_title = "agent-tui help"
            dialog.border_subtitle = "esc closes"
            for row in _rows():
                if isinstance(row, Content):
                    yield Static(row, classes="help-line")
                    continue
                label, what, is_key = row
                with Horizontal(classes="help-row"):  # a long description wraps under itself
                    yield Static(label, classes="help-label" + (" help-key" if is_key else ""))
                    yield Static(what, classes="help-what")
