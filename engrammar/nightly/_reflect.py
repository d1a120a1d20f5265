"""Weekly reflection: higher-level insights from a chat's recent memories, written as
`reflection` memories that cite their sources, through the write gate. It needs a model;
offline it is skipped and says so."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engrammar import store
from engrammar.errors import DatabaseError, Error, chat_contained
from engrammar.extract._extractor import handles_for
from engrammar.extract._prompts import ReflectionResponse, reflection_prompt
from engrammar.models import MemoryType, Op, OpKind, Scope, Status
from engrammar.runtime import _telemetry as telemetry
from engrammar.runtime._database import Database
from engrammar.runtime._llm import LLM
from engrammar.write._writer import Writer

MIN_MEMORIES = 5
MAX_MEMORIES = 60


@dataclass
class ReflectReport:
    now: datetime
    skipped: str | None = None
    chats: int = 0
    proposed: int = 0
    applied: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"job": "reflect", "now": self.now.isoformat(), "skipped": self.skipped,
                "chats": self.chats, "proposed": self.proposed, "applied": self.applied,
                "errors": self.errors}


class Reflection:
    """The reflection job's worker: for each chat due a reflection, asks the model for
    insights across its recent memories and applies them through the writer."""

    def __init__(self, db: Database, llm: LLM | None, writer: Writer) -> None:
        self.db = db
        self.llm = llm
        self.writer = writer

    def run(self, now: datetime) -> ReflectReport:
        report = ReflectReport(now=now)
        if self.llm is None:
            report.skipped = ("no LLM configured: reflection needs a model "
                              "(set MEMORY_LLM=openai)")
            return report
        with self.db.connection() as conn:
            scopes = store.chats_to_reflect(conn, now, MIN_MEMORIES)
        for scope in scopes:
            with (telemetry.span("memory.reflect.chat", user_id=scope.user_id,
                                 chat_id=scope.chat_id),
                  chat_contained(report.errors, scope.report_entry())):
                self._chat(self.llm, scope, now, report)
        return report

    def _chat(self, llm: LLM, scope: Scope, now: datetime, report: ReflectReport) -> None:
        with self.db.connection() as conn:
            memories = [m for m in store.list_memories(conn, scope, [Status.active.value])
                        if m.type is not MemoryType.reflection]
        # The most recently changed ones; boundaries are never material for insights.
        memories = sorted(memories, key=lambda m: (m.updated_at, m.id))[-MAX_MEMORIES:]
        memories = [m for m in memories if m.surface.value not in ("avoid", "never")]
        listed = handles_for(memories)
        handles = {h: m.id for h, m in listed}
        try:
            answer = llm.structured("reflect", reflection_prompt(listed, now),
                                         ReflectionResponse, scope)
        except Error as exc:
            report.errors.append({**scope.report_entry(), "error": str(exc)})
            return
        ops = [Op(op=OpKind.add, type=MemoryType.reflection, content=r.content,
                  confidence=r.confidence, salience=0.5,
                  sources=[handles[h] for h in r.sources if h in handles])
               for r in answer.reflections]
        ops = [op for op in ops if op.sources]  # an insight must rest on something
        # The reflections and the chat's reflection mark commit together: a crash
        # between them would ask the model again and apply twice.
        try:
            with self.db.connection() as conn, conn.transaction():
                result = self.writer.apply(conn, scope, ops, now=now,
                                           source="job:reflect")
                store.set_reflected(conn, scope, now)
        except DatabaseError:
            raise  # a database that is down ends the run
        except Error as exc:  # this chat's answer (say, a content over the cap)
            report.errors.append({**scope.report_entry(), "error": str(exc)})
            return
        report.chats += 1
        report.proposed += len(answer.reflections)
        report.applied += result.applied
