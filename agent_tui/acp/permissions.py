"""Permission questions across ACP, both ways, in terms of our `PermissionRequest`/`PermissionAnswer`.

Client side (an external agent asks us): the request reaches our one approval queue as an
`AcpPermissionRequest`, a `PermissionRequest` that also carries the agent's own options. Whoever
answers may pick one of them (`AcpPermissionAnswer.option_id`) or answer as for our own tools
(allow/deny, once/session/always); `choose_option` maps the latter onto the agent's options.
"For this session" is ours: we remember it ourselves, so the agent is told once
(`allow_once`/`reject_once`); its persistent `*_always` options would outlive our session and
our protected-path rule.
(Those three types are plain data defined with the workbench's `ExternalAgents` port, so the
dashboard can show and answer such a question without loading the ACP SDK.)

Server side (our engine asks the client): `SERVER_OPTIONS` are the options `agent-tui acp`
offers, and `answer_for_option` turns the client's choice back into our answer.

Invariants:
- an answer never selects an option of the other family: an allow picks an `allow_*` option or
  nothing, a deny a `reject_*` option or nothing (then the request is answered `cancelled`);
- an explicitly chosen option id wins when the agent offered it, but for an `allow_always` on a
  call that changes a protected path (then the agent's `allow_once`);
- a plain answer (no option id) picks only a `*_once` option, whatever it remembers: an
  agent's `*_always` option is picked only by its id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acp.schema import PermissionOption

from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest
from agent_tui.runtime.external_agents import AcpPermissionAnswer, AcpPermissionRequest, AgentOption

__all__ = [
    "SERVER_OPTIONS",
    "AcpPermissionAnswer",
    "AcpPermissionRequest",
    "AgentOption",
    "Choice",
    "agent_options",
    "answer_for_option",
    "choose_option",
    "describe_request",
]

_ONCE = {"allow": "allow_once", "deny": "reject_once"}


def agent_options(options: Sequence[PermissionOption]) -> tuple[AgentOption, ...]:
    return tuple(AgentOption(option.option_id, option.name, option.kind) for option in options)


@dataclass(frozen=True)
class Choice:
    """The agent's option an answer picks (None: none fits, the agent hears `cancelled`), and
    why it is not the one the user picked, when it is not."""

    option: AgentOption | None
    note: str | None = None


def choose_option(
    options: Sequence[AgentOption], answer: PermissionAnswer, *, protected: bool = False
) -> Choice:
    """The agent's option that says what `answer` says.

    An explicit `option_id` the agent offered is taken as it is, except an `allow_always` when
    the call changes a protected path (`protected`): then the agent's `allow_once`. Otherwise
    the agent's `allow_once` or `reject_once`, whatever the answer remembers (we remember a
    session answer ourselves).
    """
    if isinstance(answer, AcpPermissionAnswer) and answer.option_id is not None:
        for option in options:
            if option.option_id == answer.option_id:
                if not (protected and option.kind == "allow_always"):
                    return Choice(option)
                once = _first(options, "allow_once")
                note = (
                    f"{option.name!r} would be remembered by the agent, and the call changes a protected path"
                )
                return Choice(once, note + (f": chose {once.name!r} instead" if once else ""))
    return Choice(_first(options, _ONCE[answer.decision]))


def _first(options: Sequence[AgentOption], kind: str) -> AgentOption | None:
    return next((option for option in options if option.kind == kind), None)


# -- server side ---------------------------------------------------------------------------------
SERVER_OPTIONS: tuple[PermissionOption, ...] = (
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_session", name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id="deny_once", name="Deny", kind="reject_once"),
    PermissionOption(option_id="deny_session", name="Deny for this session", kind="reject_always"),
)
"""What `agent-tui acp` offers its client: the `always` kinds are remembered for the session."""

_SERVER_ANSWERS: dict[str, PermissionAnswer] = {
    "allow_once": PermissionAnswer("allow", "once"),
    "allow_session": PermissionAnswer("allow", "session"),
    "deny_once": PermissionAnswer("deny", "once"),
    "deny_session": PermissionAnswer("deny", "session"),
}


def answer_for_option(option_id: str | None) -> PermissionAnswer:
    """Our answer for the client's choice (None: it answered `cancelled`, which denies)."""
    if option_id is None:
        return PermissionAnswer("deny", reason="the client cancelled the request")
    answer = _SERVER_ANSWERS.get(option_id)
    if answer is None:
        return PermissionAnswer("deny", reason=f"the client chose an unknown option {option_id!r}")
    return answer


def describe_request(request: PermissionRequest) -> str:
    """The title a client shows for one of our permission requests."""
    return f"{request.tool} {request.args_preview}".strip()
