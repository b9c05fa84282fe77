"""AGENT: model engines, agent loops, tools and prompts. Dependencies arrive as arguments."""
