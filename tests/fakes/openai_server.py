"""A local fake of an OpenAI-compatible chat-completions endpoint, run as its own process on loopback.

The last user message steers it: `fail` answers 500 with a provider error; `slow:N` streams N chunks 0.1 s
apart; `think:N` sends only SSE comments, one every 0.2 s, for N seconds, then answers; `bad:KIND` misbehaves
(KIND: `not-a-chunk`, `wrong-shape`, `html`, `error-in-stream`, `cut`); anything else streams
`[<model>] <system prompt or -> | <prompt>` in 5-character chunks. A planning request (JSON mode, and a system
message that is the JSON list of agents and teams, as the reference worker sends) is answered with a plan
(`plan_for`): two steps, `research` then `write`, by the first agent (or team) listed. `GET /v1/_requests` lists
the requests it got (their `authorization` and other headers, and body), for tests of what a worker sent but a
client must never see."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from litestar import Litestar, Request, get, post
from litestar.response import Response, Stream


def _chunk(model: str, text: str | None, usage: dict[str, int] | None = None) -> bytes:
    choices = [] if text is None else [{"index": 0, "delta": {"content": text}, "finish_reason": None}]
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "model": model,
        "choices": choices,
    }
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body)}\n\n".encode()


SEEN: list[dict[str, Any]] = []


@get("/v1/_requests")
async def requests_seen() -> list[dict[str, Any]]:
    return SEEN


@post("/v1/chat/completions")
async def completions(request: Request[Any, Any, Any]) -> Response[Any]:
    body = await request.json()
    headers = dict(request.headers)
    SEEN.append({"authorization": headers.pop("authorization", None), "headers": headers, "body": body})
    model = body.get("model", "?")
    messages = body.get("messages", [])
    prompt = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    system = " / ".join(m["content"] for m in messages if m["role"] == "system") or "-"
    if "fail" in prompt:
        return Response({"error": {"message": "model overloaded, try later", "type": "server_error"}}, status_code=500)
    if prompt.startswith("bad:"):
        return _misbehave(model, prompt.split(":", 1)[1])
    catalog = _catalog(body, messages)
    if catalog is not None:
        return Stream(_stream(model, plan_for(prompt, catalog), prompt), media_type="text/event-stream")
    thinking = float(prompt.split(":", 1)[1]) if prompt.startswith("think:") else 0.0
    if prompt.startswith("slow:"):
        count, delay = int(prompt.split(":", 1)[1]), 0.1
        pieces = [f"part{i} " for i in range(count)]
    else:
        text, delay = f"[{model}] {system} | {prompt}", 0.0
        pieces = [text[i : i + 5] for i in range(0, len(text), 5)]

    async def stream() -> AsyncIterator[bytes]:
        deadline = asyncio.get_running_loop().time() + thinking
        while asyncio.get_running_loop().time() < deadline:
            yield b": thinking\n\n"
            await asyncio.sleep(0.2)
        for piece in pieces:
            if delay:
                await asyncio.sleep(delay)
            yield _chunk(model, piece)
        tokens = sum(len(p) for p in pieces)
        yield _chunk(model, None, {"prompt_tokens": len(prompt), "completion_tokens": tokens,
                                   "total_tokens": len(prompt) + tokens})  # fmt: skip
        yield b"data: [DONE]\n\n"

    return Stream(stream(), media_type="text/event-stream")


def _catalog(body: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The agents and teams of a planning request (None: it is not one)."""
    if body.get("response_format") != {"type": "json_object"}:
        return None
    for message in messages:
        try:
            found = json.loads(message["content"]) if message["role"] == "system" else None
        except ValueError:
            continue
        if isinstance(found, dict) and "agents" in found:
            return found
    return None


def plan_for(task: str, catalog: dict[str, Any]) -> str:
    """The plan of `task`: research, then write, by the first agent listed (else the first team). The task
    steers it: `plan:prose` answers in words, `plan:cycle` makes the steps depend on each other, `plan:unknown`
    names an agent that does not exist, `plan:fenced` wraps the plan in a Markdown code fence."""
    if "plan:prose" in task:
        return "I would split this into research and writing."
    agents, teams = catalog.get("agents") or [], catalog.get("teams") or []
    target = {"agent_id": agents[0]["id"]} if agents else {"team_id": teams[0]["id"]} if teams else {"agent_id": "-"}
    if "plan:unknown" in task:
        target = {"agent_id": "no-such-agent"}
    steps = [
        {"id": "research", "title": "Research", **target, "prompt": "Research {{input.task}}", "depends_on": []},
        {"id": "write", "title": "Write", **target, "prompt": "Write up {{steps.research.output}}",
         "depends_on": ["research"]},
    ]  # fmt: skip
    if "plan:cycle" in task:
        steps[0]["depends_on"] = ["write"]
    plan = json.dumps({"summary": f"research, then write: {task}", "steps": steps})
    return f"Here is the plan:\n```json\n{plan}\n```" if "plan:fenced" in task else plan


async def _stream(model: str, text: str, prompt: str) -> AsyncIterator[bytes]:
    for index in range(0, len(text), 5):
        yield _chunk(model, text[index : index + 5])
    usage = {"prompt_tokens": len(prompt), "completion_tokens": len(text), "total_tokens": len(prompt) + len(text)}
    yield _chunk(model, None, usage)
    yield b"data: [DONE]\n\n"


def _misbehave(model: str, kind: str) -> Response[Any]:
    if kind == "html":
        return Response("<html>a login page</html>", media_type="text/html")
    lines = {
        "not-a-chunk": [b"data: 5\n\n"],
        "wrong-shape": [b'data: {"choices": [{"delta": {"content": 5}}]}\n\n'],
        "error-in-stream": [_chunk(model, "par"), b'data: {"error": {"message": "context length exceeded"}}\n\n'],
        "cut": [_chunk(model, "par")],
    }[kind]

    async def stream() -> AsyncIterator[bytes]:
        for line in lines:
            yield line

    return Stream(stream(), media_type="text/event-stream")


app = Litestar([completions, requests_seen])

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    uvicorn.run(app, host="127.0.0.1", port=arguments.port, log_level="warning")
