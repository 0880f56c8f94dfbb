"""Events: the schema every other layer speaks (the bottom floor; imports nothing of ours)."""

from agent_tui.events.args_preview import args_preview
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
