"""Thin Celery tasks: load ids, call a service, commit at the task boundary."""
