"""Local stand-ins for external services that tests cannot reach: scripted model API servers."""
