"""A chat with a model that remembers: the turn an app makes, as one call.

Each turn compiles the prompt (system prompt, memory block with its summaries, the window,
the user's message), asks the configured model (any OpenAI-compatible server,
``MEMORY_LLM=openai``), then records the whole turn, message and reply in one transaction
(``Client.record_turn``), and observes the reply, so its "Decision:"/"Constraint:"/"Open:"
lines count at once. A turn whose model call fails records nothing: the log never keeps a
question without its answer, which extraction would read as the user's last word.

`engram chat` runs turns in a loop; ``examples/chat.py`` spells the same steps out on the
``openai`` SDK for an app to copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engrammar.client import Client, utcnow
from engrammar.errors import ConfigError, InvalidInput
from engrammar.models import Scope
from engrammar.recall._block import BlockItem
from engrammar.recall._layers import Compiled
from engrammar.runtime import _telemetry as telemetry
from engrammar.runtime._llm import LLM
from engrammar.write._writer import ApplyResult

NO_MODEL = ("a chat needs a model: set MEMORY_LLM=openai, and MEMORY_LLM_BASE_URL for a "
            "server other than OpenAI's (Ollama: http://localhost:11434/v1)")


@dataclass
class Turn:
    """One turn: the model's reply, the prompt it was given, and what was observed in it."""

    message: str
    reply: str
    compiled: Compiled
    observed: ApplyResult

    @property
    def memories(self) -> list[BlockItem]:
        """The memories the prompt carried."""
        return [i for i in self.compiled.items if i.memory_id is not None]

    @property
    def summaries(self) -> list[BlockItem]:
        """The day/week/month summaries the prompt carried."""
        return [i for i in self.compiled.items if i.memory_id is None]

    def to_json(self) -> dict[str, Any]:
        return {"message": self.message, "reply": self.reply,
                "compiled": self.compiled.to_json(), "observed": self.observed.to_json()}


class Chat:
    """One user's chat with the client's model (``client.llm``), turn after turn."""

    def __init__(self, client: Client, user_id: str, chat_id: str, *,
                 system: str | None = None, budget_tokens: int | None = None,
                 llm: LLM | None = None) -> None:
        model = llm or client.llm
        if model is None:
            raise ConfigError(NO_MODEL)
        self.client = client
        self.llm = model
        self.scope = Scope(user_id=user_id, chat_id=chat_id)
        self.system = system
        self.budget_tokens = budget_tokens

    def turn(self, message: str, *, now: datetime | None = None) -> Turn:
        """Compile, ask the model, record the whole turn, observe the reply."""
        if not message.strip():
            raise InvalidInput(f"empty message for chat {self.scope}")
        now = now or utcnow()
        user, chat = self.scope.user_id, self.scope.chat_id
        with telemetry.span("memory.chat.turn", user_id=user, chat_id=chat):
            compiled = self.client.compile(user, chat, message, now=now,
                                           budget_tokens=self.budget_tokens,
                                           system=self.system)
            reply = self.llm.reply("chat", compiled.messages, self.scope)
            self.client.record_turn(user, chat, message, reply or "(no reply)", at=now)
            observed = self.client.observe(user, chat, reply, now=now)
        return Turn(message, reply, compiled, observed)
