"""The tools the model calls during a round (SPEC §4): JSON-schema arguments in, compact text out."""
