"""Chat adapters (Slack, Teams, console), message parsing and answer rendering."""
