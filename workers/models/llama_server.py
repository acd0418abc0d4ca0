"""The local model's OpenAI-compatible HTTP server (llama.cpp's own server); the one module that imports xllamacpp.

It listens on 127.0.0.1 only and is set up for a small CPU machine (two cores):
- one slot: a second request waits for the first instead of halving the speed of both;
- a context large enough for one turn's rounds (system prompt, tools, search results, one or two cards, SQL results);
- every core this process may use, for prompt processing and for generation;
- the prompt cache on: a turn's rounds share their prefix, so each round processes only its new tokens, and a
  host-memory cache keeps recent prompts (every turn starts with the same system prompt and tool list);
- no context shift: a conversation that outgrows the context is an error, never a silently dropped system prompt;
- the sampling the model's publisher recommends for Qwen2.5-Coder-Instruct (temperature 0.7, top-p 0.8, top-k 20,
  repetition penalty 1.05) with a fresh seed per request: greedy decoding, or one fixed seed, makes a small model
  repeat a failing SQL statement word for word after its error instead of trying another; and a cap on the length
  of one reply.
With an API key set, every request must carry it, so other local users cannot use the server.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

import xllamacpp

from workers.models.local_gguf import LOCAL_HOST, LOCAL_PORT, LocalModelError

HOST = LOCAL_HOST
DEFAULT_PORT = LOCAL_PORT
DEFAULT_CONTEXT = 12288
MAX_REPLY_TOKENS = 1024
PROMPT_CACHE_MIB = 1024
#: Reuse cached chunks of at least this many tokens even when an earlier part of the prompt changed.
CACHE_REUSE_TOKENS = 256


def available_cores() -> int:
    """The cores this process may run on (the container's or taskset's share, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ServerOptions:
    port: int = DEFAULT_PORT
    context: int = DEFAULT_CONTEXT
    threads: int = field(default_factory=available_cores)
    api_key: str | None = None
    alias: str = "local"
    verbose: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.port <= 65535:
            raise LocalModelError(f"port {self.port} is not a TCP port (1-65535)")
        if not 1024 <= self.context <= 131072:
            raise LocalModelError(f"context size {self.context} is outside 1024-131072 tokens")
        if not 1 <= self.threads <= 256:
            raise LocalModelError(f"{self.threads} threads is outside 1-256")


def require_free_port(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            raise LocalModelError(f"port {port} on {HOST} is in use; choose another with --port") from None


class LlamaServer:
    """llama.cpp's server for one GGUF file, running in this process (its HTTP and inference threads are native)."""

    def __init__(self, model_path: Path, options: ServerOptions) -> None:
        require_free_port(options.port)
        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.model_alias = {options.alias}
        params.hostnames = [HOST]
        params.port = options.port
        params.n_ctx = options.context
        params.n_parallel = 1
        params.n_predict = MAX_REPLY_TOKENS
        params.cpuparams.n_threads = options.threads
        params.cpuparams_batch.n_threads = options.threads
        params.cache_prompt = True
        params.cache_ram_mib = PROMPT_CACHE_MIB
        params.n_cache_reuse = CACHE_REUSE_TOKENS
        params.ctx_shift = False
        params.sampling.temp = 0.7
        params.sampling.top_p = 0.8
        params.sampling.top_k = 20
        params.sampling.penalty_repeat = 1.05
        params.ui = False
        params.verbosity = 3 if options.verbose else 1  # 1: errors only
        if options.api_key:
            params.api_keys = [options.api_key]
        self.options = options
        try:
            self._server: xllamacpp.Server | None = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise LocalModelError(
                f"llama.cpp could not start on {model_path} ({exc}); its errors are printed above"
            ) from None

    @property
    def url(self) -> str:
        """The server root; the OpenAI-compatible API is under /v1."""
        return f"http://{HOST}:{self.options.port}"

    def close(self) -> None:
        """Stop serving (the native server finishes its main loop and frees the model)."""
        self._server = None
