"""The API's errors: each has an HTTP status, a stable code and one sentence for a person. Messages never name a
table or database the caller may not see, a host, a URL or a stack trace."""

from __future__ import annotations

from core.errors import TablescoutError


class ApiError(TablescoutError):
    status = 400
    code = "bad_request"


class BadRequest(ApiError):
    pass


class Unauthorized(ApiError):
    status = 401
    code = "unauthorized"


class NotFound(ApiError):
    status = 404
    code = "not_found"


class TooManyRequests(ApiError):
    status = 429
    code = "rate_limited"

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
