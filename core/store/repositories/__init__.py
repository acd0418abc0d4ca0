"""All SQL of the metadata store lives here; callers pass the session their boundary opened."""
