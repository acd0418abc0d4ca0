"""Configuration: `settings` (secrets and service URLs from the environment), `file` (the operator's
`tablescout.yaml`: sources, roles, row filters, masks) and `watch` (that file reloaded while processes run)."""
