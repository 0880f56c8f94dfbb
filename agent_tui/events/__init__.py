"""Events: the schema every other layer speaks (the bottom floor; imports nothing of ours).

The names below load lazily, each from its module when first asked for: a command that only
shows text (`visible`) or labels a session does not import the pydantic models (`model`).
"""

from agent_tui.events.lazy_names import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports this package (through `agent_tui`): `typing` costs its start-up
    from agent_tui.events.argument_preview import args_preview
    from agent_tui.events.clients import (
        OUR_CLIENT,
        driven_from_its_terminal,
        is_ours,
        terminal_cli,
        terminal_name,
    )
    from agent_tui.events.frames import Frame
    from agent_tui.events.json_words import json_problem
    from agent_tui.events.model import (
        EVENT_TYPES,
        PAYLOADS,
        Event,
        EventValidationError,
        log_line_json_schema,
    )
    from agent_tui.events.terminal_text import visible, visible_json, visible_runs
    from agent_tui.events.turn_vocabulary import ENDINGS, EndTone
    from agent_tui.events.validation import event_from_dict, event_from_json, payload_from
    from agent_tui.events.wording import counted

__getattr__, __dir__ = lazy_names(__name__, __file__)

__all__ = [
    "ENDINGS",
    "EVENT_TYPES",
    "OUR_CLIENT",
    "PAYLOADS",
    "EndTone",
    "Event",
    "EventValidationError",
    "Frame",
    "args_preview",
    "counted",
    "driven_from_its_terminal",
    "event_from_dict",
    "event_from_json",
    "is_ours",
    "json_problem",
    "log_line_json_schema",
    "payload_from",
    "terminal_cli",
    "terminal_name",
    "visible",
    "visible_json",
    "visible_runs",
]
