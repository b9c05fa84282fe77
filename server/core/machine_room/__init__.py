"""The machine room's pure core: model slots and failures, subscriptions, dictation, child environments."""
