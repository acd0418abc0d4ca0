"""Other clients than chat (SPEC §8): API tokens that act as a directory user, the HTTP API under `/api/v1/` and
the MCP server (`tablescout mcp` over stdio, `/mcp` over streamable HTTP), all over the same turns, search, cards,
notes, read-only SQL and permissions as the chat surfaces.

`api.gateway` holds every operation; `api.http` and `api.mcp_server` are thin surfaces over it, and
`api.surface` mounts both on the bot server's aiohttp application.
"""
