"""The "new agent" form: a prompt, where it works, which model (or which ACP agent of the config
file: "ACP: claude" after the models), its budget (dollars, tokens, or both; empty: the config's
default, if any), and (in a git repository) its own worktree. On an attached dashboard it also
asks which host runs it (the selected session's host first); the directory is then the host's,
checked there, not here: the form offers the picked host's own directory (its `--cwd`, as its
presence says it; empty when the host does not say), follows the host picked until the
directory is edited, and an empty or relative directory is the host's own.

`ctrl+s` (or the Start button) starts it, `esc` closes without starting. The form checks what it
can before it closes (a prompt, a directory that exists, a repository for a worktree) and says
what is wrong under the fields; it dismisses with an `AgentSpec`, and the dashboard starts it.
Whether the directory is a git repository is asked off the UI thread as the path is typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, Label, Select, Static, TextArea

from agent_tui.ports import AgentSpec, BudgetLimit, ModelChoice, repo_root
from agent_tui.tui.formatting import MUTED, short_path
from agent_tui.tui.marked import marked
from agent_tui.tui.screens.confirm import dialog_button, field_row
from agent_tui.tui.spend_text import BudgetInputError, parse_tokens, parse_usd, tokens_text
from agent_tui.tui.text_entry import focus_now


class TickBox(Checkbox):
    """A checkbox whose box is empty while unchecked: Textual's draws its `X` either way, only
    dimmer when off, which reads as checked (at least in some themes)."""

    def render(self) -> Content:
        self.BUTTON_INNER = "X" if self.value else " "
        return super().render()


@dataclass(frozen=True)
class AcpEntry:
    """The model list's value for an ACP agent (a model's value is its profile name)."""

    name: str


RunsOn = str | AcpEntry


class NewAgentScreen(ModalScreen[AgentSpec | None]):
    """Dismisses with what to start, or None.

    Args:
        directory: the default directory (the project).
        models: the model choices, the default first.
        draft: a spec to fill the form with (one that failed to start, so nothing is retyped).
        agents: `(name, command line)` of the ACP agents it can start instead, listed after the
            models.
        hosts: the hosts it may start on, each with its own directory (None: not known), on an
            attached dashboard (None: this process).
        host: the host offered first.
    """

    BINDINGS = [
        # Not a priority binding: it must reach the screen after the keys typed before it, which
        # the prompt box handles in its own queue (a paste then ctrl+s would start without it).
        Binding("ctrl+s", "start", "Start"),
        Binding("escape", "dismiss", "Cancel"),
    ]

    def __init__(
        self,
        directory: Path,
        models: list[ModelChoice],
        draft: AgentSpec | None = None,
        agents: list[tuple[str, str]] | None = None,
        hosts: dict[str, str | None] | None = None,
        host: str | None = None,
    ) -> None:
        super().__init__()
        self._hosts = hosts
        self.host = host if not hosts or host in hosts else next(iter(hosts))
        """The host picked (None: this process, or no host to pick)."""
        self._directory = draft.cwd if draft is not None else directory
        self._models = models
        self._agents = list(agents or ())
        self._draft = draft
        self.repository: Path | None = None
        self._offered = ""  # the directory the form offered (a host's own), until it is edited

    def _runs_on(self) -> list[tuple[str, RunsOn]]:
        entries: list[tuple[str, RunsOn]] = [(f"{c.name} · {c.label}", c.name) for c in self._models]
        entries += [(f"ACP: {name} · {command}", AcpEntry(name)) for name, command in self._agents]
        return entries

    def _drafted(self, entries: list[tuple[str, RunsOn]]) -> RunsOn:
        draft = self._draft
        wanted = None if draft is None else AcpEntry(draft.acp) if draft.acp else draft.model
        values = [value for _, value in entries]
        return wanted if wanted in values else values[0]

    def compose(self) -> ComposeResult:
        draft = self._draft
        with Vertical(id="new-agent-dialog") as dialog:
            dialog.border_title = "New agent"
            dialog.border_subtitle = "enter: new line · ctrl+s starts · esc closes"
            yield Label("Prompt", classes="field-label")
            yield TextArea(
                draft.prompt if draft is not None else "",
                id="new-agent-prompt",
                soft_wrap=True,
                placeholder="What should the agent do? (several lines are fine)",
            )
            if self._hosts:
                hosts = [(name, name) for name in self._hosts]
                yield field_row(
                    "Host",
                    Select(hosts, value=self.host, allow_blank=False, id="new-agent-host", compact=True),
                )
            yield from self._run_fields()
            yield TickBox(
                "Own worktree (a new git branch)",
                value=draft.own_worktree if draft is not None else False,
                id="new-agent-worktree",
                disabled=True,
                compact=True,
            )
            yield Static(Content.styled("Checking the directory…", MUTED), id="new-agent-repo")
            yield Static("", id="new-agent-error")
            with Horizontal(id="new-agent-buttons"):
                yield dialog_button("Start  ctrl+s", "new-agent-start", "start", "primary")
                yield dialog_button("Cancel  esc", "new-agent-cancel", "dismiss")

    def _run_fields(self) -> ComposeResult:
        """The rows of where, on what, under which name and within what budget the agent runs."""
        draft = self._draft
        yield field_row("Directory", self._directory_input())
        entries = self._runs_on()
        value = self._drafted(entries)
        yield field_row(
            "Model", Select(entries, value=value, allow_blank=False, id="new-agent-model", compact=True)
        )
        name = draft.name if draft is not None else ""
        placeholder = "optional: made from the prompt"
        yield field_row("Name", Input(name, placeholder=placeholder, id="new-agent-name", compact=True))
        budget = draft.budget if draft is not None else None
        usd = f"{budget.usd:.2f}" if budget is not None and budget.usd is not None else ""
        tokens = tokens_text(budget.tokens) if budget is not None and budget.tokens is not None else ""
        yield field_row(
            "Budget",
            Input(usd, placeholder="dollars, e.g. 2.50", id="new-agent-budget-usd", compact=True),
            Input(tokens, placeholder="tokens, e.g. 500k", id="new-agent-budget-tokens", compact=True),
        )

    def _directory_input(self) -> Input:
        if self._hosts is None:
            return Input(short_path(self._directory), id="new-agent-dir", compact=True)
        self._offered = self._directory_of(self.host)
        drafted = str(self._draft.cwd) if self._draft is not None else self._offered
        return Input(
            "" if drafted == "." else drafted,  # a path on the host: never shortened with this ~
            placeholder="the host's own directory",
            id="new-agent-dir",
            compact=True,
        )

    def _directory_of(self, host: object) -> str:
        """A host's own directory ("" when it does not say)."""
        return (self._hosts or {}).get(host if isinstance(host, str) else "") or ""

    @on(Select.Changed, "#new-agent-host")
    def _host_changed(self, event: Select.Changed) -> None:
        field = self.query_one("#new-agent-dir", Input)
        if field.value == self._offered:  # not edited: the directory of the host now picked
            self._offered = field.value = self._directory_of(event.value)

    def on_mount(self) -> None:
        focus_now(self.query_one("#new-agent-prompt", TextArea))  # before the keys typed after `n`
        self._check_directory(self.directory)

    @property
    def directory(self) -> Path:
        """The directory typed ("." when empty: the host's own, on an attached dashboard)."""
        text = self.query_one("#new-agent-dir", Input).value.strip() or "."
        return Path(text) if self._hosts is not None else Path(text).expanduser()

    @on(Input.Changed, "#new-agent-dir")
    def _directory_changed(self, event: Input.Changed) -> None:
        self._check_directory(self.directory)

    @work(exclusive=True, group="repo-check", thread=True)
    def _check_directory(self, directory: Path) -> None:
        if self._hosts is not None:
            self.app.call_from_thread(self._on_the_host)
            return
        root = repo_root(directory) if directory.is_dir() else None
        self.app.call_from_thread(self._show_repository, directory, root)

    def _on_the_host(self) -> None:
        """A remote form: the directory is the host's, which checks it (and the worktree)."""
        self.query_one("#new-agent-worktree", Checkbox).disabled = False
        self.query_one("#new-agent-repo", Static).update(
            Content.styled("the directory is on the host: the host checks it", MUTED)
        )

    def _show_repository(self, directory: Path, root: Path | None) -> None:
        if directory != self.directory:
            return  # the path changed again; a newer check is on its way
        self.repository = root
        box = self.query_one("#new-agent-worktree", Checkbox)
        note = self.query_one("#new-agent-repo", Static)
        box.disabled = root is None
        if root is None:
            box.value = False
            what = "no such directory" if not directory.is_dir() else "not a git repository"
            note.update(Content.styled(f"{what}: the agent works in the directory itself", MUTED))
        else:
            note.update(marked(f"git repository {short_path(root)}", MUTED))

    # -- starting --------------------------------------------------------------------------------
    def spec(self) -> AgentSpec | str:
        """What the form says, or why it cannot start."""
        prompt = self.query_one("#new-agent-prompt", TextArea).text.strip()
        if not prompt:
            return "Write a prompt first."
        directory = self.directory
        remote = self._hosts is not None
        if not remote and not directory.is_dir():
            return f"{directory}: no such directory."
        worktree = self.query_one("#new-agent-worktree", Checkbox).value
        runs_on = self.query_one("#new-agent-model", Select).value
        try:
            budget = BudgetLimit(
                usd=parse_usd(self.query_one("#new-agent-budget-usd", Input).value),
                tokens=parse_tokens(self.query_one("#new-agent-budget-tokens", Input).value),
            )
        except BudgetInputError as error:
            return f"Budget: {error}."
        return AgentSpec(
            prompt=prompt,
            cwd=directory if remote else directory.resolve(),
            name=self.query_one("#new-agent-name", Input).value.strip(),
            model=runs_on if isinstance(runs_on, str) else None,
            own_worktree=bool(worktree),
            acp=runs_on.name if isinstance(runs_on, AcpEntry) else None,
            budget=None if budget.empty else budget,
        )

    def action_start(self) -> None:
        spec = self.spec()
        if isinstance(spec, str):
            self.query_one("#new-agent-error", Static).update(marked("✗ " + spec, "$text-error"))
            return
        if self._hosts:
            picked = self.query_one("#new-agent-host", Select).value
            self.host = picked if isinstance(picked, str) else self.host
        self.dismiss(spec)
