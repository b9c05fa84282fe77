"""The Library's storage: the graph ledgers (`data/graph/`) and the accepted-import queue."""
