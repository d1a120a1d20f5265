"""OpenTelemetry, opt-in: spans and metrics of the client's calls, the jobs, a chat's turns
and each LLM call, read back through the SDK's in-memory exporter and metric reader."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import openai
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from engrammar import AsyncClient, Client, InvalidInput, Op, Settings
from engrammar.chat import Chat
from engrammar.models import MemoryType, OpKind
from engrammar.runtime import _telemetry as telemetry
from engrammar.runtime._llm import LLM
from engrammar.scheduler import _scheduler as scheduler
from tests.conftest import T0
from tests.fake_openai import FakeOpenAI, Scripted, completion
from tests.fake_openai import fake_openai as fake_openai  # the fixture

SALT = "pepper"


@dataclass
class Otel:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def finished(self, name: str | None = None) -> list[ReadableSpan]:
        return [s for s in self.spans.get_finished_spans() if name is None or s.name == name]

    def points(self, metric: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        assert data is not None
        return [p for rm in data.resource_metrics for sm in rm.scope_metrics
                for m in sm.metrics if m.name == metric for p in m.data.data_points]


@pytest.fixture
def otel() -> Iterator[Otel]:
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    meter_provider = MeterProvider(metric_readers=[reader])
    telemetry.enable(tracer_provider, meter_provider, salt=SALT)
    yield Otel(spans, reader)
    telemetry.disable()
    meter_provider.shutdown()
    tracer_provider.shutdown()


def attributes_text(otel: Otel) -> str:
    return json.dumps([dict(s.attributes or {}) for s in otel.finished()], default=str)


def test_off_by_default_and_on_from_settings(client: Client) -> None:
    assert not telemetry.enabled()
    telemetry.enable_from(Settings())
    assert not telemetry.enabled()
    client.record("u1", "c1", "user", "nothing is traced", at=T0)  # no provider, no error
    telemetry.enable_from(Settings(otel=True))
    try:
        assert telemetry.enabled()
    finally:
        telemetry.disable()


def test_every_client_call_is_a_span_with_hashed_ids(otel: Otel, client: Client) -> None:
    client.record("dana@example.com", "c1", "user", "I live in Berlin.", at=T0)
    client.apply("dana@example.com", "c1",
                 [Op(op=OpKind.add, type=MemoryType.profile, content="Lives in Berlin")],
                 now=T0)
    block = client.recall("dana@example.com", "c1", "where do I live?", now=T0)
    compiled = client.compile("dana@example.com", "c1", "where do I live?", now=T0)
    client.observe("dana@example.com", "c1", "Decision: meet on Fridays", now=T0)
    client.memories("dana@example.com", "c1")
    with pytest.raises(InvalidInput):
        client.record("dana@example.com", "c1", "robot", "beep")
    names = [s.name for s in otel.finished()]
    assert names[:3] == ["memory.record", "memory.apply", "memory.recall"]
    assert {"memory.compile", "memory.observe", "memory.memories"} <= set(names)
    recall = otel.finished("memory.recall")[0]
    assert recall.attributes is not None
    assert recall.attributes["memory.user"] == telemetry.hashed("dana@example.com", SALT)
    assert recall.attributes["memory.chat"] == telemetry.hashed("c1", SALT)
    assert recall.attributes["memory.tokens"] == block.tokens
    compile_span = otel.finished("memory.compile")[0]
    assert compile_span.attributes is not None
    assert compile_span.attributes["memory.tokens"] == compiled.tokens
    assert "dana@example.com" not in attributes_text(otel)  # ids are never exported
    failed = otel.finished("memory.record")[-1]
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.events[0].name == "exception"
    calls = {(p.attributes["memory.call"], p.attributes.get("error.type")): p.count
             for p in otel.points("memory.call.duration")}
    assert calls[("record", None)] == 1 and calls[("record", "InvalidInput")] == 1
    assert calls[("recall", None)] == 1
    tokens = {p.attributes["memory.call"]: p.sum for p in otel.points("memory.prompt.tokens")}
    assert tokens == {"recall": block.tokens, "compile": compiled.tokens}


def test_each_job_is_a_span(otel: Otel, client: Client) -> None:
    client.record("u1", "c1", "user", "My name is Dana and I live in Berlin.", at=T0)
    reports = scheduler.run_nightly(client, T0)
    jobs = [s.attributes["memory.job"] for s in otel.finished("memory.job")
            if s.attributes]
    assert jobs == [r["job"] for r in reports] == list(scheduler.NIGHTLY)
    assert {p.attributes["memory.job"] for p in otel.points("memory.job.duration")} == set(
        scheduler.NIGHTLY)
    # Each chat the night extracts is a span of its own, inside the job's, ids hashed.
    chats = otel.finished("memory.extract.chat")
    job = next(s for s in otel.finished("memory.job")
               if s.attributes and s.attributes["memory.job"] == "extract")
    assert len(chats) == 1 and chats[0].parent is not None
    assert chats[0].parent.span_id == job.context.span_id
    assert chats[0].attributes is not None
    assert chats[0].attributes["memory.chat"] == telemetry.hashed("c1", SALT)


def test_llm_calls_and_chat_turns(otel: Otel, client: Client,
                                  fake_openai: FakeOpenAI) -> None:
    oa = openai.OpenAI(base_url=fake_openai.url, api_key="test", max_retries=0)
    llm = LLM(oa, "gpt-4o-mini", db=client.db, max_retries=1, backoff=0.001)
    fake_openai.enqueue(Scripted(status=500, body={"error": {"message": "boom",
                                                             "type": "server_error"}}),
                        Scripted(body=completion("Hello Dana!")))
    turn = Chat(client, "u1", "c1", llm=llm).turn("Hi, I am Dana.", now=T0)
    oa.close()
    assert turn.reply == "Hello Dana!"
    (chat,) = otel.finished("memory.chat.turn")
    inside = [s for s in otel.finished() if s.parent and s.parent.span_id ==
              chat.context.span_id]
    # The turn is recorded whole once the model answered (after its one retry).
    assert [s.name for s in inside] == ["memory.compile", "memory.llm", "memory.llm",
                                        "memory.record_turn", "memory.observe"]
    failed, answered = otel.finished("memory.llm")
    assert failed.status.status_code is StatusCode.ERROR
    assert answered.attributes is not None
    assert answered.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert answered.attributes["memory.purpose"] == "chat"
    assert answered.attributes["gen_ai.usage.input_tokens"] == 100
    assert answered.attributes["gen_ai.usage.output_tokens"] == 10
    assert answered.attributes["memory.user"] == telemetry.hashed("u1", SALT)
    assert answered.start_time is not None and answered.end_time is not None
    assert answered.end_time > answered.start_time
    tokens = {p.attributes["gen_ai.token.type"]: p.value for p in otel.points(
        "memory.llm.tokens")}
    assert tokens == {"input": 100, "output": 10}
    assert sum(p.count for p in otel.points("memory.llm.duration")) == 2


def test_an_awaited_call_is_a_child_of_the_callers_span(otel: Otel, client: Client) -> None:
    tracer = telemetry._active.tracer if telemetry._active else None
    assert tracer is not None

    async def main() -> None:
        aclient = AsyncClient(client, workers=1)
        with tracer.start_as_current_span("request"):
            await aclient.recall("u1", "c1", "anything?", now=T0)
        await asyncio.to_thread(aclient._executor.shutdown)

    asyncio.run(main())
    (request,) = otel.finished("request")
    (recall,) = otel.finished("memory.recall")
    assert recall.parent is not None and recall.parent.span_id == request.context.span_id
