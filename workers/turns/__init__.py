"""The turn engine: one user message, rounds against the model with tools, and a stored, honest answer."""
