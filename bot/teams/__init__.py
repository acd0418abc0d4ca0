"""Microsoft Teams: Adaptive Card rendering (`cards`) and the Bot Framework adapter, inbound and outbound."""
