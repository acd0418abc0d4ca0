"""The Slack surface: Block Kit rendering and the Web API client that posts status and answers (outbound), and the
slack-bolt event handling that turns messages into turns (inbound)."""
