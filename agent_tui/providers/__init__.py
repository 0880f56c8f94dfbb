"""Real models behind the provider port: the OpenAI-compatible and Anthropic adapters, their
shared retry policy, model settings (profiles, environment, flags) and the coding-agent prompt.

`config.resolve_settings` says which model to use, `factory.build_provider` builds it.
"""
