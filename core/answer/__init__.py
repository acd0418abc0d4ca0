"""The answer of a turn, the contract between the turn engine and every surface that shows it.

- `model`: `Answer` and its `ResultTable`s, built by both turn paths, stored with the turn and in the answer outbox,
  and read back as that type by Slack, Teams, the console and `ask --json`.
- `values`: the one value formatter: how a result cell reads on every surface, from what its column holds.
"""
