"""The machine room's model side:
the engine that builds providers, the model guard, pricing, subscription clients."""
