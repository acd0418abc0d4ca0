"""Source databases: connectors, introspection, profiling, copy detection, joins and table cards."""
