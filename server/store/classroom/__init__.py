"""The Classroom's storage: session records (`data/chats/`) and lesson summaries."""
