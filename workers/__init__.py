"""Celery app, thin tasks and the turn engine that runs rounds against the model."""
