"""What model calls cost: the shipped price table, the user's overrides, and the arithmetic."""
