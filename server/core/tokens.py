"""Token estimates shared by every system (seed §6 budgets; issue 15 context windows)."""


def estimate_tokens(text: str) -> int:
    """Estimated tokens: ceil(len(text) / 4)."""
    return (len(text) + 3) // 4
