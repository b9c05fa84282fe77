"""The machine room's routes: health, settings, subscriptions, dictation."""
