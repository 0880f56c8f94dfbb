"""Greeting helpers (the demo's agents rename this module to bar.py)."""


def greet(name: str) -> str:
    return f"hello, {name}"
