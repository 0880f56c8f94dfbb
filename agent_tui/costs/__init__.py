"""What model calls cost: the maintained price table (`genai-prices`), the user's overrides, and the arithmetic."""
