"""Identity-directory sync (SPEC §6): Slack user groups and Microsoft Entra ID group membership, read from the
platforms' APIs and written into the metadata store, where `core.access.permissions.resolve_principal`
maps them to roles.

`service.sync_directory` is the entry point for the command and the scheduled task; `slack_sync` and `graph_sync`
read one platform each into a `snapshot.DirectorySnapshot`, which `snapshot.apply_snapshot` writes.
"""
