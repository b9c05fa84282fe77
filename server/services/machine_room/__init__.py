"""The machine room's services:
models and the offline model, subscriptions, dictation, heap and background threads."""
