"""Shared foundation of tablescout: settings, the metadata store, permissions and shared types.

Every other package imports `core`; `core` imports none of them.
"""
