"""CORE: the pure domain. No file, network, clock or randomness except injected."""
