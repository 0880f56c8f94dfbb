"""`AttachedRun`: the dashboard's run when it is attached to hosts on a bus (`agent-tui attach`).

It offers the screens the surface a `LiveRun` offers (state, redraws, approvals, commands), over
an `AttachedBus`: the state is the bus's (folded by the same reducer from the stream), and it is
its own `CommandClient`: every command is a control request to the host that runs the session.

Invariants:
- a command's `Reply` is the host's (or a sentence saying it did not answer: a retry of a command
  that got no answer is the same request, `BusCommands`); stopping everything asks every host
  that runs something and adds up what they stopped, a host's refusal arriving as
  `NoticePosted` (the app shows it);
- an action on a session whose host is unreachable, while the bus is away, or that the
  dashboard's credentials may not ask for (a read-only dashboard, a host whose control subject
  the server refused) is refused at once with a sentence saying so, never sent; a read-only
  dashboard says so once as a notice, and in the summary bar for as long as it is attached;
- the tree groups root sessions under a line per host, except the hosts that are gone (left,
  or silent) with nothing running or waiting: their sessions are under one `FINISHED` line at
  the end, folded until the user unfolds it (a finished `run --bus` leaves a host behind in the
  stream, one per run), never marked "host unreachable" for being over;
- `shutdown` closes the connection and stops nothing on any host;
- finishing a session's work is commands like any other, given the session's host longer to
  answer (`FINISH_TIMEOUT_S`); the closed sessions are every `serve` host's, a host that refuses
  or does not answer passed over, and a closed session is reopened on the host that listed it;
- every change the bus reports goes to `redraws` (a `RedrawThrottle`): the screen redraws at
  most once a period, at once when a request starts waiting or something other than an event
  changed (presence, the connection); while the bus catches up with the stream's history (not
  `live` yet) the first event redraws at once (the first screen), then the period is
  `CATCH_UP_REDRAW_S` and a request in that history does not redraw at once: the redraw when it
  becomes live (at once) shows what waits;
- what exists when the run starts (the screens) and the state folded from the stream live as long
  as the run: they are kept out of the garbage collector's passes (`RunCollector`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import anyio
from textual.message import Message

from agent_tui.events import Event
from agent_tui.ports import (
    Adapters,
    Answer,
    AttachedBus,
    BusUnreachable,
    Closed,
    Command,
    CommandClient,
    FinishRefused,
    ModelChoice,
    NewAgent,
    ProjectRulesState,
    Reply,
    RunResult,
    StopAll,
    StoredSession,
    read_result,
)
from agent_tui.reducer import DashboardState, SessionView
from agent_tui.tui.messages import LiveRunFinished, NoticePosted
from agent_tui.tui.redraw_throttle import RedrawThrottle
from agent_tui.tui.run_collector import RunCollector

HOST_DEFAULT_MODEL = "host default"
"""The one model the new-agent form offers on a host: the one it is configured with."""
CATCH_UP_REDRAW_S = 1.0
"""How often the screen redraws while the dashboard catches up with the stream's history: a
redraw of a hundred sessions' rows costs what folding thousands of events does, and rows that
change faster than they can be read are not worth it (becoming live redraws at once)."""
FINISH_TIMEOUT_S = 60.0
"""How long a dashboard waits for a host to finish work (a merge of a big branch takes a while)."""


def _no_provider() -> object:
    raise RuntimeError("an attached dashboard runs no model: the host does")


def local_time(moment: datetime) -> str:
    return moment.astimezone().strftime("%H:%M:%S")


class AttachedRun:
    """The run an attached dashboard shows and controls (see the module docstring).

    Args:
        bus: the bus (opened by `play`).
        post: delivers messages to the UI (the app's `post_message`).
    """

    remote = True

    def __init__(
        self,
        bus: AttachedBus,
        post: Callable[[Message], object],
        *,
        time_text: Callable[[datetime], str] = local_time,
    ) -> None:
        self.bus = bus
        self.time_text = time_text
        self.selected: Callable[[], str | None] = lambda: None
        """The session selected on the screen (a new agent starts on its host)."""
        self._post = post
        self.sessions_dir: Path | None = None
        self.project: Path | None = Path.cwd()
        self.models = [ModelChoice(HOST_DEFAULT_MODEL, "the model the host is configured with", _no_provider)]  # type: ignore[arg-type]
        self.finished = False
        self.redraws = RedrawThrottle()
        self._collector = RunCollector()
        self._shown_events = False
        self._closing: anyio.Event | None = None
        self._closed: anyio.Event | None = None
        self._close_requested = False
        self._problems_told = 0
        self._read_only_told = False
        self.finish_timeout = FINISH_TIMEOUT_S
        """Seconds a host is given for a command that finishes work (`slow`)."""
        self._closed_on: dict[str, str] = {}  # a closed session listed → its host

    @property
    def state(self) -> DashboardState:
        return self.bus.state

    @property
    def commands(self) -> CommandClient:
        return self

    def _finishing_hosts(self) -> list[str]:
        """The reachable hosts that finish work (`serve`; a scenario run does not)."""
        return [
            view.name
            for view in self.bus.hosts()
            if view.reachable
            and view.presence is not None
            and view.presence.presence is not None
            and view.presence.presence.kind == "serve"
        ]

    # -- running -------------------------------------------------------------------------------
    async def play(self) -> RunResult | None:
        """Open the bus and follow it until `shutdown`."""
        self._closing, self._closed = anyio.Event(), anyio.Event()
        if self._close_requested:
            self._closing.set()
        unsubscribe = self.bus.listen(self._on_change)
        self._collector.keep_out()  # the screens live as long as the run, and the state grows
        try:
            try:
                await self.bus.open()
            except BusUnreachable as error:
                self._post(LiveRunFinished("Not attached to the bus.", error=str(error)))
                return None
            await self._closing.wait()
        finally:
            unsubscribe()
            self._collector.restore()  # before any await: a cancelled play may not get further
            with anyio.CancelScope(shield=True):
                await self.bus.close()
            self.finished = True
            self._closed.set()
        return None

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Stop following the bus; nothing on any host is stopped."""
        self._close_requested = True
        if self._closing is not None:
            self._closing.set()
        if self._closed is not None:
            with anyio.move_on_after(timeout):
                await self._closed.wait()  # set once play's finally closed the connection

    def _on_change(self, event: Event | None) -> None:
        if event is not None:  # the path every event takes: keep it short
            if self._problems_told < len(self.bus.problems):
                self._tell_problems()
            if not self._shown_events:
                self._shown_events = True  # the first event shows at once (the first screen) ...
                if not self.bus.live:
                    self.redraws.slower(CATCH_UP_REDRAW_S)  # ... the rest of the history slower
                self.redraws.changed(ask=True)
                return
            self.redraws.changed(
                ask=event.type == "permission.resolved"
                and event.payload.get("decision") == "ask"
                and self.bus.live
            )
            return
        self._tell_problems()
        if self.bus.read_only and not self._read_only_told:
            self._read_only_told = True
            self._post(NoticePosted(self.read_only_note() or "", title="Read-only", severity="warning"))
        if self.bus.live:
            self.redraws.slower(None)
        self.redraws.changed(ask=True)

    def _tell_problems(self) -> None:
        while self._problems_told < len(self.bus.problems):
            self._post(NoticePosted(self.bus.problems[self._problems_told], title="The bus"))
            self._problems_told += 1

    # -- what the screens ask --------------------------------------------------------------------
    def status(self) -> str:
        """The summary bar's words for the bus: where, and whether it is there."""
        where = f"attached · {self.bus.target.shown}"
        if self.bus.is_open and self.bus.read_only:
            where += " · read-only"
        if self.bus.is_open and self.bus.connected and not self.bus.live:
            return f"{where} · catching up"
        return where

    def read_only_note(self) -> str | None:
        """Why nothing can be asked of any host, when the credentials say so (else None)."""
        return self.bus.control_refusal() if self.bus.is_open and self.bus.read_only else None

    def trouble(self) -> str:
        """What is wrong with the bus now, for the summary bar ("" when nothing is)."""
        if not self.bus.connected and self.bus.disconnected_since is not None:
            return f"bus disconnected since {self.time_text(self.bus.disconnected_since)}"
        return ""

    def host_label(self, host: str) -> str:
        view = self.bus.host(host)
        if view.left_at is not None:
            return f"{host} · left at {self.time_text(view.left_at)}"
        if view.unreachable_since is not None:
            return f"{host} · unreachable since {self.time_text(view.unreachable_since)}"
        if view.presence is None:
            return f"{host} · no heartbeat"
        return host

    def groups(self, state: DashboardState, roots: list[str]) -> list[tuple[str, list[str]]]:
        """Root sessions under a line per host, hosts by name (the session tree's grouping); the
        finished hosts' under one line at the end."""
        by_host: dict[str, list[str]] = {}
        for root in roots:
            by_host.setdefault(self.bus.host_of(root) or "?", []).append(root)
        busy = {self.bus.host_of(sid) for sid, session in state.sessions.items() if _busy(session)}
        finished = [host for host in by_host if host not in busy and self._gone(host)]
        groups = [(self.host_label(host), by_host[host]) for host in sorted(by_host) if host not in finished]
        if finished:
            ended = [root for host in sorted(finished) for root in by_host[host]]
            groups.append(
                (f"{FINISHED} · {len(finished)} host{'s' if len(finished) > 1 else ''} gone", ended)
            )
        return groups

    def folded(self, line: str) -> bool:
        """The finished hosts' line starts folded: one line, however many runs ended."""
        return line.startswith(f"{FINISHED} · ")

    def _gone(self, host: str) -> bool:
        """Whether `host` left or is silent (judged only while the bus is there to hear it)."""
        return self.bus.connected and not self.bus.host(host).reachable

    def mark(self, session_id: str) -> str | None:
        """What the tree says after a session whose host cannot be reached, or has left, while
        the session runs or waits (an ended one is over wherever its host is)."""
        host = self.bus.host_of(session_id)
        if host is None or not self.bus.connected:
            return None
        view = self.bus.host(host)
        session = self.state.sessions.get(session_id)
        if view.reachable or session is None or not _busy(session):
            return None
        return "host left" if view.left_at is not None else "host unreachable"

    def log_of(self, session_id: str) -> Path | None:
        """The session's log, when its host keeps it on this machine's disk."""
        host = self.bus.host_of(session_id)
        presence = self.bus.host(host).presence if host is not None else None
        if presence is None or presence.presence is None:
            return None
        path = Path(presence.presence.sessions_dir) / f"{session_id}.jsonl"
        return path if path.is_file() else None

    def is_external(self, client: str | None) -> bool:
        return client not in (None, "agent-tui")

    def external_agents(self) -> list[tuple[str, str]]:
        return []

    def project_rules(self) -> ProjectRulesState | None:
        return None

    def check_project_rules(self) -> None:
        return None

    def running_turns(self) -> int:
        return 0  # quitting an attached dashboard stops nothing: nothing runs here

    def _refusal(self, session_id: str | None) -> str | None:
        """Why an action on `session_id` cannot be sent now (None: it can)."""
        if self.finished or not self.bus.is_open:
            return "The dashboard is not attached to the bus."
        if not self.bus.connected:
            return "The bus is disconnected; try again when it is back."
        if session_id is None:
            return self.bus.control_refusal()
        host = self.bus.host_of(session_id)
        if host is None:
            return "No host publishes that session."
        refused = self.bus.control_refusal(host)
        if refused is not None:
            return refused
        view = self.bus.host(host)
        if view.left_at is not None:
            return f"Host {host} has stopped (it left at {self.time_text(view.left_at)})."
        if not view.reachable:
            return f"Host {host} is unreachable."
        return None

    # -- controls --------------------------------------------------------------------------------
    def is_waiting(self, session_id: str, request_id: str) -> bool:
        session = self.state.sessions.get(session_id)
        return session is not None and request_id in session.pending and self._refusal(session_id) is None

    async def send(self, command: Command, host: str | None = None) -> Reply:
        """Ask the host of the command's session (a new agent: `host`, else `new_agent_host`)
        to carry it out; refused here, with the sentence, when it cannot be sent now."""
        if isinstance(command, StopAll | Closed):  # every host's: refused when the bus is
            refusal = self._refusal(None)
            if refusal is not None:
                return Reply(ok=False, message=refusal)
            if isinstance(command, StopAll):
                return await self._stop_all(command)
            return await self._list_closed(command)
        session_id: str | None = getattr(command, "session_id", None)
        what = command.verb.replace("_", " ")
        if isinstance(command, NewAgent):
            host = host or self.new_agent_host(self.selected())
            what = f"new agent on {host}"
            if command.model == HOST_DEFAULT_MODEL:
                command = command.model_copy(update={"model": None})
        elif session_id is not None:
            host = self.bus.host_of(session_id)
            if host is None and session_id in self._closed_on:  # closed: the stream has it no more
                host, session_id = self._closed_on[session_id], None
        refusal = self._refusal(session_id)
        if refusal is None and host is None:
            refusal = (
                "No host publishes that session." if session_id is not None else "No host is on the bus."
            )
        if refusal is None and host is not None:
            refusal = self.bus.control_refusal(host)
        if isinstance(command, Answer) and refusal is None:
            if not self.is_waiting(command.session_id, command.request_id):
                refusal = "that request is no longer waiting."
        if refusal is not None or host is None:
            return Reply(ok=False, message=refusal)
        timeout = self.finish_timeout if getattr(command, "slow", False) else None
        outcome = await self.bus.control.send(host, command, timeout=timeout)
        refused = self.bus.control_refusal(outcome.host)
        if not outcome.answered and refused is not None:  # the server dropped the request
            return Reply(ok=False, message=refused)
        return outcome.reply(what)

    async def _stop_all(self, command: StopAll) -> Reply:
        """Every host that runs something stops it all: how many turns they stopped together."""
        stopped = 0
        for host in self.bus.hosts():
            sessions = self.state.sessions.items()
            if not any(self.bus.host_of(sid) == host.name and s.running for sid, s in sessions):
                continue
            if not host.reachable or self.bus.control_refusal(host.name) is not None:
                continue
            outcome = await self.bus.control.send(host.name, command)
            if outcome.answered and outcome.ok:
                stopped += int(outcome.detail.get("stopped", 0))
            else:
                self._post(NoticePosted(outcome.sentence("stop all"), title=f"Stop all · {host.name}"))
        return Reply(ok=True, detail={"stopped": stopped})

    async def _list_closed(self, command: Closed) -> Reply:
        """The closed sessions of every `serve` host, newest first; a host that refuses or does
        not answer is passed over (when none answered, their reasons are the refusal)."""
        found: list[list[StoredSession]] = []
        problems: list[str] = []
        for host in self._finishing_hosts():
            outcome = await self.bus.control.send(host, command, timeout=self.finish_timeout)
            try:
                listed = read_result(outcome.reply("list the closed sessions"), Adapters.closed, "closed")
            except FinishRefused as error:
                problems.append(str(error))
                continue
            self._closed_on.update((session.session_id, host) for session in listed)
            found.append(listed)
        if problems and not found:
            return Reply(ok=False, message=" ".join(problems))
        closed = sorted((s for listed in found for s in listed), key=lambda s: s.session_id)
        closed.sort(key=lambda session: session.last_ts, reverse=True)
        return Reply(ok=True, detail={"closed": Adapters.closed.dump_python(closed, mode="json")})

    def session_chosen(self, session_id: str) -> None:
        """Nothing to read here: the hosts hold their sessions."""

    def agent_hosts(self) -> tuple[dict[str, str | None], str | None]:
        """The hosts that may be asked for a new agent (reachable, and not refused to this
        dashboard's credentials), each with its own directory (its presence's `cwd`), and the
        one offered first (`new_agent_host`)."""
        hosts = {
            h.name: h.presence.presence.cwd if h.presence is not None and h.presence.presence else None
            for h in self.bus.hosts()
            if h.reachable and self.bus.control_refusal(h.name) is None
        }
        first = self.new_agent_host(self.selected())
        return hosts, first if first in hosts else next(iter(hosts), None)

    def new_agent_host(self, selected: str | None = None) -> str | None:
        """The host a new agent starts on when none is picked: the selected session's, else the
        first reachable one."""
        if selected is not None and self.bus.host_of(selected) is not None:
            return self.bus.host_of(selected)
        reachable = [host.name for host in self.bus.hosts() if host.reachable]
        return reachable[0] if reachable else None


FINISHED = "finished"
"""The tree's line over the sessions of hosts that are gone with nothing running."""


def _busy(session: SessionView) -> bool:
    """Whether a session runs or waits for an answer."""
    return session.status == "running" or bool(session.pending)
