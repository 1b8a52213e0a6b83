"""The reference worker's model: one streamed chat completion from an OpenAI-compatible endpoint, read chunk by
chunk, whatever the provider does wrong told as an LlmError."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import httpx
import msgspec

from controlplane_worker.config import WorkerConfig

Emit = Callable[[str, dict[str, Any]], Awaitable[None]]  # an event of the running task: its type and data


class LlmError(Exception):
    """The model provider answered with an error, with something that is not a chat-completion stream, or not at
    all within the time allowed."""


class ChatModel:
    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        llm_headers = {"Authorization": f"Bearer {config.llm_api_key}"} if config.llm_api_key else {}
        self.llm = httpx.AsyncClient(
            base_url=config.llm_base_url.rstrip("/"), headers=llm_headers, timeout=config.llm_timeout_seconds
        )

    def call_headers(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The headers one model call takes from its run's environment (`environ`: the execution environment's
        variables and secrets, as the lease resolved them): `OPENAI_API_KEY`, when the run has it, is the call's
        key instead of the worker's own (`--llm-api-key`), as it would be for an OpenAI client started with that
        environment; and each `--llm-header NAME=VARIABLE` the worker was given, when the run has VARIABLE. The
        values go to the model endpoint only: never into an event, the answer, or a log line."""
        headers = {}
        key = environ.get("OPENAI_API_KEY")
        if key:
            headers["Authorization"] = f"Bearer {_header_value('OPENAI_API_KEY', key)}"
        for header, variable in self.config.llm_env_headers.items():
            if variable in environ:
                headers[header] = _header_value(variable, environ[variable])
        return headers

    async def chat(
        self,
        model: str,
        messages: list[dict[str, str]],
        settings: dict[str, Any],
        agent_id: str | None,
        emit: Emit,
        environ: Mapping[str, str] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """Stream one chat completion, emitting `message_chunk` events; the full text and the usage. Whatever the
        provider does wrong (an error status or object, something that is not a stream of chunks, a stream that
        stops before the model finished, no end within the LLM timeout) is an LlmError that says what.
        `environ`: the run's environment (`call_headers`)."""
        body = {"model": model, "messages": messages, "stream": True, "stream_options": {"include_usage": True}}
        body.update({k: v for k, v in settings.items() if v is not None and k != "model"})
        text: list[str] = []
        usage: dict[str, Any] = {}
        finished = False
        limit = self.config.llm_timeout_seconds
        try:
            async with (
                asyncio.timeout(limit),
                self.llm.stream(
                    "POST", "/chat/completions", json=body, headers=self.call_headers(environ or {})
                ) as response,
            ):
                if response.status_code >= 400:
                    raise LlmError(_provider_message(response.status_code, await response.aread()))
                kind = response.headers.get("content-type", "")
                if not kind.startswith("text/event-stream"):
                    raise LlmError(f"the LLM endpoint did not stream its answer (content type {kind or 'none'!r})")
                async for data in _sse_data(response):
                    if data == "[DONE]":
                        finished = True
                        break
                    pieces, done, reported = _read_chunk(data)
                    finished = finished or done
                    usage = reported or usage
                    for piece in pieces:
                        text.append(piece)
                        await emit("message_chunk", {"text": piece, "agent_id": agent_id})
        except TimeoutError:
            raise LlmError(f"the LLM endpoint did not finish its answer within {limit:g} s") from None
        except httpx.HTTPError as exc:
            raise LlmError(f"LLM endpoint unreachable or too slow: {exc!r}") from exc
        if not finished:
            raise LlmError("the LLM endpoint's stream ended before the model finished (no [DONE], no finish_reason)")
        return "".join(text), usage

    async def aclose(self) -> None:
        await self.llm.aclose()


def _header_value(variable: str, value: str) -> str:
    """The value, when a header can carry it; an LlmError naming the variable (never the value) otherwise."""
    if not value.isascii() or any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value):
        raise LlmError(f"the run's {variable} cannot be sent to the model endpoint: a header cannot carry it")
    return value


def _read_chunk(data: str) -> tuple[list[str], bool, dict[str, Any] | None]:
    """One `data:` line of a chat-completion stream: its text pieces, whether a choice finished, its usage."""
    try:
        chunk = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise LlmError(f"the LLM endpoint sent malformed data: {exc}") from None
    if not isinstance(chunk, dict):
        raise LlmError(f"the LLM endpoint sent something that is not a chat-completion chunk: {data[:200]}")
    if chunk.get("error") is not None:
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise LlmError(f"LLM provider error in its stream: {str(message)[:500]}")
    choices = chunk.get("choices") or []
    usage = chunk.get("usage")
    if not isinstance(choices, list) or (usage is not None and not isinstance(usage, dict)):
        raise LlmError(f"the LLM endpoint sent a chunk of the wrong shape: {data[:200]}")
    pieces: list[str] = []
    finished = False
    for choice in choices:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        content = delta.get("content") if isinstance(delta, dict) else None
        if not isinstance(choice, dict) or (delta is not None and not isinstance(delta, dict)):
            raise LlmError(f"the LLM endpoint sent a chunk of the wrong shape: {data[:200]}")
        if content is not None and not isinstance(content, str):
            raise LlmError(f"the LLM endpoint sent a chunk of the wrong shape: {data[:200]}")
        if content:
            pieces.append(content)
        finished = finished or bool(choice.get("finish_reason"))
    return pieces, finished, usage


def _provider_message(status: int, body: bytes) -> str:
    try:
        decoded = msgspec.json.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # whatever the provider sent, its status stands
        decoded = None
    message = None
    if isinstance(decoded, dict):
        error = decoded.get("error")
        message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    return f"LLM provider error {status}: {message or body.decode(errors='replace')[:500]}"


async def _sse_data(response: httpx.Response) -> AsyncIterator[str]:
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            yield line[5:].strip()
