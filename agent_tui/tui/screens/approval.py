"""The approval modal: one permission request in full, and the four ways to answer it.

Opened only by the user (enter on the approval queue). `y` allow once, `s` allow for this
session, `!` always allow, `n` deny; `escape` closes without answering. A question from an
external (ACP) agent offers that agent's own options too, one a row under their own names
(wrapped, never cut off, at 80x24 and at a phone's 45 columns), each saying what it does (an
`always` kind reads "the agent remembers": it is the agent's own rule, kept by the agent);
`1`, `2`, … pick one by its id. `y`, `s` and `n` still answer as for our own tools, and the
hint under the options says so: `s` is agent-tui's rule for this session, not the agent's
`always` (`choose_option` maps such an answer onto the agent's options). The call is shown by
the title the agent gave it and the input it was given (a command as a command, argv quoted as
a shell reads it; an edit with a diff as a diff, when the dashboard made a preview of it). The
ways to answer are docked at the dialog's foot; what is asked scrolls above them, so a long
diff never hides them. The dashboard closes it with a notification if the request is withdrawn
while it is open.

A terminal agent's question (Claude Code or Codex in the user's own terminal, asked through its
hook) is shown with the agent's path (`claude · my-proj › Explore`), its command or its edit
(a diff: against the file as it is now when the dashboard could preview it, else the one the
request carries), and the risk agent-tui's classifier gave it, said to be shown only (agent-tui
never answers for a person). Its answers are the CLI's: `y` once, `!` the CLI's own "always
allow" (kept by the CLI), `n` deny; there is no `s` (agent-tui's rule for this session does not
reach a terminal agent).

What is asked is shown so it can be judged: a `write_file`/`edit_file` as a diff against the
file as it is now (a new file all added, an overwrite marked as one, an edit that will fail
says why), a `shell` call as its whole command with the reason it got its risk, anything else
as its arguments. For `spawn_agent`, a line says that "this session" and "always" allow every
later spawn (any agent, any prompt), not only this one.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.screen import ModalScreen
from textual.widgets import Button, Static
from textual.widgets.button import ButtonVariant

from agent_tui.events import visible
from agent_tui.ports import (
    AcpPermissionAnswer,
    AgentOption,
    ChangePreview,
    PermissionAnswer,
    preview_asked,
    preview_change,
)
from agent_tui.reducer import DashboardState, PermissionView, ToolCallView
from agent_tui.tui.formatting import MUTED, call_of, risk_content, session_path
from agent_tui.tui.marked import marked
from agent_tui.tui.screens.confirm import dialog_button
from agent_tui.tui.widgets.diff_view import DiffView

_ANSWERS: dict[str, tuple[str, ButtonVariant, PermissionAnswer]] = {
    "allow-once": ("Allow once  y", "success", PermissionAnswer("allow", "once")),
    "allow-session": ("This session  s", "primary", PermissionAnswer("allow", "session")),
    "allow-always": ("Always  !", "warning", PermissionAnswer("allow", "always")),
    "deny": ("Deny  n", "error", PermissionAnswer("deny", "once")),
}
"""Our own answers: each choice's button (label, look) and what it answers."""


RECORDED_NOTE = "Recorded log: this request is shown as it was; it cannot be answered here."
OPTION_VARIANTS: dict[str, ButtonVariant] = {
    "allow_once": "success",
    "allow_always": "primary",
    "reject_once": "error",
}
"""How each kind of an agent's option looks (`reject_always` and unknown kinds: `warning`)."""
OPTION_REACH = {
    "allow_once": "allow once",
    "allow_always": "always · the agent remembers",
    "reject_once": "deny once",
    "reject_always": "deny always · the agent remembers",
}
"""What each kind of an agent's option does, beside its name: the `always` kinds are the agent's
own rules, kept by the agent past this session and beyond our protected paths."""


class ApprovalScreen(ModalScreen[PermissionAnswer | None]):
    """Shows a pending request; dismisses with the user's answer, or None when closed.

    Args:
        state: the dashboard state the request is in (for the agent path and full arguments).
        view: the pending request.
        answerable: False when nobody waits for the answer (a recorded log): the buttons are
            hidden and `note` says why.
        position: (n, of) in the queue, for the title.
        note: the explanation shown instead of the buttons.
        preview: the change a write_file/edit_file would make now (None: show the arguments).
        options: an external agent's own options for this question (empty: ours).
        host: the host the session runs on (an attached dashboard's; None: this process).
        terminal: `claude` or `codex` for a terminal agent's question (its CLI's answers), else None.
    """

    BINDINGS = [
        Binding("y", "answer('allow-once')", "Allow once"),
        Binding("s", "answer('allow-session')", "Allow for session"),
        Binding("exclamation_mark", "answer('allow-always')", "Always allow", key_display="!"),
        Binding("n", "answer('deny')", "Deny"),
        Binding("escape", "dismiss", "Close"),
        Binding("A", "app.next_approval", "Next request"),
        *(Binding(str(n), f"option({n})", f"Option {n}", show=False) for n in range(1, 10)),
    ]

    def __init__(
        self,
        state: DashboardState,
        view: PermissionView,
        *,
        answerable: bool,
        position: tuple[int, int] = (1, 1),
        note: str = RECORDED_NOTE,
        preview: ChangePreview | None = None,
        options: tuple[AgentOption, ...] = (),
        host: str | None = None,
        terminal: str | None = None,
    ) -> None:
        super().__init__()
        self.host = host
        self.terminal = terminal
        self.view = view
        self.answerable = answerable
        self.preview = preview
        self.options = options
        self._path = session_path(state, view.session_id)
        self._call = call_of(state, view)
        self._args = _agent_call_text(self._call) if options else _full_args(self._call, view)
        self._position = position
        self._note = note

    @property
    def key(self) -> tuple[str, str]:
        return (self.view.session_id, self.view.request_id)

    def compose(self) -> ComposeResult:
        view = self.view
        number, total = self._position
        preview = self.preview
        with Vertical(id="approval-dialog", classes="-diff" if preview is not None else "") as dialog:
            dialog.border_title = f"Approval {number} of {total}"
            with Vertical(id="approval-answers"):
                yield from self._answers()
            with VerticalScroll(id="approval-body"):
                yield Static(self._title(), id="approval-title")
                on_host = Content.assemble((" on ", MUTED), marked(self.host, "bold")) if self.host else ""
                asked_by = Content.assemble(("asked by ", MUTED), marked(self._path, "bold"), on_host)
                yield Static(asked_by, id="approval-path")
                if view.risk_reason:
                    yield Static(
                        Content.assemble(("why ", MUTED), marked(view.risk_reason)), id="approval-reason"
                    )
                warnings = [Content.assemble(("⚠ ", "bold"), marked(line)) for line in self._warnings()]
                if warnings:
                    destructive = view.risk == "destructive" or view.policy == "protected"
                    warning = Content("\n").join(warnings)
                    yield Static(
                        warning, id="approval-warning", classes="-destructive" if destructive else ""
                    )
                if self.terminal is not None:
                    yield Static(terminal_risk_note(self.terminal), id="approval-risk-note")
                if preview is not None and preview.kind not in ("fails", "unchanged"):
                    with VerticalScroll(id="approval-diff"):
                        yield DiffView(preview)
                else:
                    with VerticalScroll(id="approval-args"):
                        yield Static(self._call_input())
                ids = f"{view.session_id} · {view.turn_id} · {view.request_id}"
                policy = f" · policy {view.policy}" if view.policy else ""
                yield Static(marked(ids + policy, MUTED), id="approval-ids")

    def _answers(self) -> ComposeResult:
        """The ways to answer (or why there are none): docked at the dialog's foot, so a long
        diff or command never pushes them off a small screen."""
        view = self.view
        if self.answerable and self.options:
            # One option a row, its name wrapped in the dialog's width: agents name their
            # options at length ("Yes, and don't ask again for commands that start with …"),
            # and none may be cut off at the dialog's edge, even at a phone's width.
            with Vertical(id="approval-buttons", classes="-agent"):
                for number, option in enumerate(self.options[:9], start=1):
                    variant = OPTION_VARIANTS.get(option.kind, "warning")
                    label = option_label(number, option)
                    yield dialog_button(label, f"option-{number}", f"option({number})", variant)
            yield Static(ours_hint(len(self.options)), id="approval-hint")
        elif self.answerable:
            terminal = self.terminal
            with Horizontal(id="approval-buttons"):
                for choice, (text, variant, _) in _ANSWERS.items():
                    if terminal is not None and choice == "allow-always":
                        text = f"Always ({terminal})  !"  # the CLI's own rule, kept by the CLI
                    if terminal is None or choice != "allow-session":  # ours does not reach a CLI
                        yield dialog_button(text, choice, f"answer('{choice}')", variant)
            if terminal is not None:
                yield Static(terminal_hint(terminal), id="approval-hint")
                return
            reach = answer_reach(view.tool)
            if reach is not None:
                yield Static(
                    Content.assemble(("⚠ ", "bold"), marked(reach)),
                    id="approval-reach",
                    classes="-destructive",
                )
            yield Static(Content.styled("esc closes without answering", MUTED), id="approval-hint")
        else:
            yield Static(Content.styled(f"{self._note}  esc closes", MUTED), id="approval-hint")

    def _title(self) -> Content:
        view, preview = self.view, self.preview
        asked: list[Content | str | tuple[str, str]] = [
            ("?  ", "bold"),
            marked(view.tool, MUTED),
            (" · ", MUTED),
        ]
        if preview is None and self.options and view.args_preview:
            # An agent's call is known by the title the agent gave it (Codex: the command).
            return Content.assemble(
                marked(view.args_preview, "bold $text-accent"), *asked, risk_content(view.risk)
            )
        if preview is None:
            run = marked(view.tool, "bold $text-accent")
            return Content.assemble(("Run ", "bold"), run, ("?  ", "bold"), risk_content(view.risk))
        verb = {"create": "Create", "overwrite": "Overwrite", "edit": "Edit"}.get(preview.kind, "Write")
        parts = [
            (f"{verb} ", "bold"),
            marked(preview.path, "bold $text-accent"),
            *asked,
            risk_content(view.risk),
        ]
        if preview.kind in ("create", "overwrite", "write", "edit"):
            added, removed = preview.counts()
            parts += [
                (" · ", MUTED),
                (f"+{added}", "$text-success"),
                (" ", ""),
                (f"−{removed}", "$text-error"),
            ]
        if preview.kind == "create":
            parts += [(" · new file", MUTED)]
        if preview.asked:
            parts += [(" · as asked: the file is on its host", MUTED)]
        return Content.assemble(*parts)

    def _warnings(self) -> list[str]:
        view, preview = self.view, self.preview
        lines: list[str] = []
        if preview is not None and preview.kind == "overwrite":
            lines.append(f"overwrites the existing {preview.path} (its whole content is replaced)")
        if preview is not None and preview.problem:
            lines.append(preview.problem)
        if preview is not None and preview.kind == "unchanged":
            lines.append(f"{preview.path} already has exactly this content: nothing would change")
        if view.reason:
            lines.append(view.reason)
        elif view.risk == "destructive":
            lines.append("destructive: it can delete or overwrite data")
        return lines

    def _call_input(self) -> Content:
        """What the call is given: a terminal agent's diff, a command, or its arguments."""
        if self.terminal is not None and _is_diff(self.view.args_preview):
            return highlight(visible(self.view.args_preview or ""), language="diff")
        command = self._command()
        if command is not None:
            return highlight(visible(command), language="bash")
        return marked(self._args, "$foreground")

    def _command(self) -> str | None:
        call = self._call
        if call is None:
            return None
        args = call.args  # a terminal agent's: Claude Code's Bash `command`; Codex's argv or `cmd`
        if self.terminal is None and self.options:  # an agent's call: its raw input may name a command
            raw = args.get("rawInput")
            args = raw if isinstance(raw, dict) else {}
        if self.terminal is not None or self.options:
            command = next((args[key] for key in ("command", "cmd") if key in args), None)
            if isinstance(command, list) and all(isinstance(part, str) for part in command):
                command = shlex.join(command)  # Codex sends argv: ["bash", "-lc", "git push"]
        else:
            command = args.get("cmd") if self.view.tool == "shell" else None
        return command if isinstance(command, str) else None

    def on_mount(self) -> None:
        if not self.answerable:
            return
        # An agent's options may put "always" first: the focus (enter) goes to a one-time allow.
        once = [n for n, option in enumerate(self.options[:9], start=1) if option.kind == "allow_once"]
        selector = f"#option-{once[0]}" if once else "#approval-buttons Button"
        self.query_one(selector, Button).focus()

    def action_answer(self, choice: str) -> None:
        if self.answerable and self.terminal is not None and choice == "allow-session":
            self.notify(
                f"{self.terminal} has no answer for this session here: y once, ! {self.terminal}'s "
                "own always, n deny.",
                severity="warning",
            )
        elif self.answerable:
            self.dismiss(_ANSWERS[choice][2])
        else:
            self.notify("A recorded request cannot be answered.", severity="warning")

    def action_option(self, number: int) -> None:
        """Pick the agent's `number`-th option (1-based)."""
        if not self.answerable:
            self.notify("A recorded request cannot be answered.", severity="warning")
        elif 1 <= number <= len(self.options):
            self.dismiss(option_answer(self.options[number - 1]))

    def withdraw(self) -> None:
        """The engine stopped waiting: close without an answer."""
        self.dismiss(None)


def option_answer(option: AgentOption) -> AcpPermissionAnswer:
    """The answer that picks `option` by its id: an allow or a deny by its kind. agent-tui itself
    remembers nothing for it (`once`): an `always` option is a rule the agent keeps, not ours."""
    if option.kind.startswith("allow"):
        return AcpPermissionAnswer("allow", "once", option_id=option.option_id)
    return AcpPermissionAnswer("deny", "once", option_id=option.option_id)


def option_label(number: int, option: AgentOption) -> Content:
    """`1  Yes, proceed  · allow once`: the option's key, the agent's name for it (as text, not
    markup) and what it does."""
    reach = OPTION_REACH.get(option.kind, option.kind)
    return Content.assemble((f"{number}  ", "bold"), marked(option.name), (f"  · {reach}", "dim"))


def ours_hint(count: int) -> Content:
    """The line under an agent's options: which keys are the agent's and which are ours (`s`
    is agent-tui's rule for this session, never the agent's own `always`)."""
    keys = "1" if count == 1 else f"1–{min(count, 9)}"
    return Content.assemble(
        (f"{keys} the agent's options · ", MUTED),
        ("y", "bold"),
        (" once · ", MUTED),
        ("s", "bold"),
        (" this session (agent-tui remembers, not the agent) · ", MUTED),
        ("n", "bold"),
        (" deny · esc closes", MUTED),
    )


def terminal_hint(cli: str) -> Content:
    """The line under a terminal agent's answers: `!` is the CLI's own rule, kept by the CLI."""
    return Content.assemble(
        ("y", "bold"),
        (" once · ", MUTED),
        ("!", "bold"),
        (f' {cli}\'s own "always allow" ({cli} remembers it) · ', MUTED),
        ("n", "bold"),
        (" deny · esc closes (answer in its terminal instead)", MUTED),
    )


def terminal_risk_note(cli: str) -> Content:
    """Whose the risk shown is: agent-tui's classifier's, shown only."""
    return Content.styled(
        f"The risk is agent-tui's reading, shown only: {cli} asks by its own rules, and only you answer.",
        MUTED,
    )


def _is_diff(text: str | None) -> bool:
    """Whether a request's preview is a change (a unified diff, or a Codex patch)."""
    return text is not None and text.startswith(("--- ", "*** Begin Patch", "diff --git"))


def answer_reach(tool: str) -> str | None:
    """How far "this session" and "always" reach for `tool`, when that is more than it looks.

    A remembered answer covers the tool at that risk whatever its arguments (`RememberKey`):
    for `spawn_agent` that is every agent, with any prompt, it would start from then on.
    """
    if tool == "spawn_agent":
        return (
            "s allows every spawn_agent in this session, ! every future spawn_agent in this project: "
            "any agent, any prompt, without asking"
        )
    return None


def _agent_call_text(call: ToolCallView | None) -> str:
    """An external agent's call as the user needs it: its title, then the input it was given."""
    if call is None:
        return "(the agent did not describe the call)"
    args = call.args
    title = args.get("title")
    raw = args.get("rawInput")
    given = (
        raw if raw not in (None, {}) else {k: v for k, v in args.items() if k not in ("title", "toolCallId")}
    )
    body = orjson.dumps(given, option=orjson.OPT_INDENT_2).decode()
    return f"{title}\n{body}" if isinstance(title, str) and title else body


def _full_args(call: ToolCallView | None, view: PermissionView) -> str:
    if call is not None and call.args:
        return orjson.dumps(call.args, option=orjson.OPT_INDENT_2).decode()
    return view.args_preview or "(no arguments)"


def change_preview(cwd: Path | None, call: ToolCallView, *, terminal: bool) -> ChangePreview | None:
    """What a call would change in `cwd` now: ours, an external agent's diff, or (`terminal`) a
    terminal agent's `Edit`/`Write` (None: it writes no file); with no `cwd` (the file is on a
    host), what it asks for, from its arguments."""
    change = _terminal_change(call.tool, call.args) if terminal else _as_our_change(call.tool, call.args)
    if cwd is None:
        return preview_asked(*change)
    if not terminal:
        return preview_change(cwd, *change)
    preview = preview_change(cwd, *change)
    # A failure here is our tools' (a path outside the directory): not the CLI's.
    return None if preview is None or preview.kind == "fails" else preview


def _as_our_change(tool: str, args: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """An external agent's call that carries a diff (ACP `content: [{type: diff, path, oldText,
    newText}]`) as the `write_file`/`edit_file` it amounts to, so it is previewed like ours."""
    content = args.get("content")
    items = content if isinstance(content, list) else []
    diffs = [item for item in items if isinstance(item, dict) and item.get("type") == "diff"]
    if tool in ("write_file", "edit_file") or len(diffs) != 1 or not isinstance(diffs[0].get("path"), str):
        return tool, args
    diff = diffs[0]
    if not diff.get("oldText"):
        return "write_file", {"path": diff["path"], "content": diff.get("newText") or ""}
    return "edit_file", {"path": diff["path"], "old": diff["oldText"], "new": diff.get("newText") or ""}


def _terminal_change(tool: str, args: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    """Claude Code's `Edit`/`Write` as the `edit_file`/`write_file` it amounts to, so it is
    previewed against the file as it is now, like ours (anything else as it is)."""
    path = args.get("file_path")
    if tool == "Edit" and isinstance(path, str):
        return "edit_file", {
            "path": path,
            "old": args.get("old_string", ""),
            "new": args.get("new_string", ""),
        }
    if tool == "Write" and isinstance(path, str):
        return "write_file", {"path": path, "content": args.get("content", "")}
    return tool, args
