"""A scripted shop-support agent instrumented with real OpenTelemetry GenAI spans.

No model is called: the "model" is a few rules, so the example runs offline and gives
the same answers every time. What is real is the telemetry: a ``chat`` span per model
step (input and output messages, tool calls by id) and an ``execute_tool`` span per
call, in the GenAI semantic conventions, through the global tracer provider — exactly
what an instrumented agent emits. ``SHOP_AGENT_VARIANT=v2`` simulates a prompt change
that breaks two answers, so two runs have something to compare.

    aem test run shop --agent examples.shop.agent:answer
"""

from __future__ import annotations

import json
import os
from typing import Any

from opentelemetry import trace

TOOLS: dict[str, Any] = {
    "get_delivery_price": lambda city: {"city": city, "price_rub": 300},
    "get_return_policy": lambda: {"days": 14, "condition": "unworn, with receipt"},
    "orders_get_status": lambda order_id: {"order_id": order_id, "status": "shipped"},
}
_tracer = trace.get_tracer("examples.shop")


def _variant() -> str:
    return os.environ.get("SHOP_AGENT_VARIANT", "v1")


def _plan(question: str) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The tool calls the 'model' makes for ``question`` and a template of its answer."""
    q = question.lower()
    if "deliver" in q:
        if _variant() == "v2":
            return [], "Our return policy: you can return items within 14 days."
        return [
            ("get_delivery_price", {"city": "Kazan"})
        ], "Delivery to {city} costs {price_rub} rubles."
    if "return" in q and "order" in q:
        return [("orders_get_status", {"order_id": "42"})], "Order {order_id} is {status}."
    if "return" in q:
        return [
            ("get_return_policy", {})
        ], "You can return items within {days} days if {condition}."
    if "classify" in q:
        body = {"topic": "delivery", "urgent": _variant() == "v1"}
        if _variant() == "v2":
            return [], "Here is the ticket: " + json.dumps(body)
        return [], "```json\n" + json.dumps(body) + "\n```"
    return [], "I don't know; I can help with orders, delivery and returns."


def _chat(messages: list[dict[str, Any]], output: dict[str, Any]) -> None:
    with _tracer.start_as_current_span("chat shop-rules") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.request.model", "shop-rules")
        span.set_attribute("gen_ai.input.messages", json.dumps(messages))
        span.set_attribute("gen_ai.output.messages", json.dumps([output]))


def answer(question: str) -> str:
    """Answer one customer question, emitting the spans an instrumented agent emits."""
    calls, template = _plan(question)
    messages: list[dict[str, Any]] = [
        {"role": "user", "parts": [{"type": "text", "content": question}]}
    ]
    facts: dict[str, Any] = {}
    with _tracer.start_as_current_span("invoke_agent shop") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        root.set_attribute("gen_ai.agent.name", "shop")
        if calls:
            parts = [
                {"type": "tool_call", "id": f"call_{i}", "name": n, "arguments": a}
                for i, (n, a) in enumerate(calls)
            ]
            step = {"role": "assistant", "parts": parts, "finish_reason": "tool_calls"}
            _chat(messages, step)
            messages.append({"role": "assistant", "parts": parts})
            for i, (name, arguments) in enumerate(calls):
                with _tracer.start_as_current_span(f"execute_tool {name}") as span:
                    span.set_attribute("gen_ai.operation.name", "execute_tool")
                    span.set_attribute("gen_ai.tool.name", name)
                    span.set_attribute("gen_ai.tool.call.id", f"call_{i}")
                    span.set_attribute("gen_ai.tool.call.arguments", json.dumps(arguments))
                    result = TOOLS[name](**arguments)
                    span.set_attribute("gen_ai.tool.call.result", json.dumps(result))
                facts.update(result)
                messages.append(
                    {
                        "role": "tool",
                        "parts": [
                            {"type": "tool_call_response", "id": f"call_{i}", "response": result}
                        ],
                    }
                )
        text = template.format(**facts) if calls else template
        _chat(
            messages,
            {
                "role": "assistant",
                "parts": [{"type": "text", "content": text}],
                "finish_reason": "stop",
            },
        )
    return text
