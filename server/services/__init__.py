"""SERVER: composition roots (stores, turn) and named seams (liveness, offline model, models)."""
