"""Structured calls to any OpenAI-compatible chat endpoint, retried and audited.

Every call, failed or not, is written to ``llm_calls`` on a connection of its own, so the
audit survives a chat transaction that rolls back.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessage
from pydantic import BaseModel, ValidationError

from engrammar import store
from engrammar.errors import LLMError, MalformedOutput, Refusal
from engrammar.models import Scope
from engrammar.runtime import _telemetry as telemetry
from engrammar.runtime._usage import Meter

if TYPE_CHECKING:
    from engrammar.runtime._database import Database
    from engrammar.settings import Settings

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")

RETRYABLE = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError,
             openai.InternalServerError)


class LLM:
    def __init__(self, client: openai.OpenAI, model: str, *, db: Database | None = None,
                 max_retries: int = 3, backoff: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.client = client
        self.model = model
        self.db = db
        self.max_retries = max_retries
        self.backoff = backoff
        self._sleep = sleep
        self.meter = Meter()  # tokens of every response, for the job reports

    @classmethod
    def from_settings(cls, settings: Settings, db: Database | None) -> LLM | None:
        if settings.llm == "none":
            return None
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "unused"
        # Retries are ours (with the audit row per attempt), so the client's are off.
        client = openai.OpenAI(base_url=settings.llm_base_url, api_key=key,
                               timeout=settings.llm_timeout, max_retries=0)
        return cls(client, settings.llm_model, db=db, max_retries=settings.llm_max_retries)

    def structured_request(self, messages: list[dict[str, str]],
                           response_model: type[BaseModel]) -> dict[str, Any]:
        """The body of a structured call: what ``structured`` sends, and what a line of a
        batch (nightly._batch) carries, so the two paths ask the same question."""
        return {
            "model": self.model,
            "messages": messages,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": response_model.__name__,
                                "schema": response_model.model_json_schema()},
            },
            "temperature": 0,
        }

    def structured(self, purpose: str, messages: list[dict[str, str]], response_model: type[T],
                   scope: Scope | None = None) -> T:
        """Ask for JSON fitting ``response_model``; retry 429, 5xx and timeouts with backoff."""
        request = self.structured_request(messages, response_model)
        return self._call(purpose, messages, request, scope, lambda text, chat_id: parse(
            response_model, text, purpose=purpose, chat_id=chat_id))

    def structured_answer(self, purpose: str, messages: list[dict[str, str]], body: Any,
                          response_model: type[T], scope: Scope | None = None) -> T:
        """The answer to a structured request that came back another way (a batch's result
        line, ``body`` as the API returns a chat completion), read and audited exactly as
        ``structured`` reads and audits its own."""
        try:
            completion: object = ChatCompletion.model_validate(body)
        except ValidationError:
            completion = json.dumps(body)
        return self.settle(purpose, messages, completion, scope, lambda text, chat_id: parse(
            response_model, text, purpose=purpose, chat_id=chat_id), time.perf_counter())

    def reply(self, purpose: str, messages: list[dict[str, str]],
              scope: Scope | None = None) -> str:
        """The model's free-text answer to ``messages`` (a chat turn), retried and audited
        like every call."""
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        return self._call(purpose, messages, request, scope, _text)

    def _call(self, purpose: str, messages: list[dict[str, str]], request: dict[str, Any],
              scope: Scope | None, finish: Callable[[str | None, str | None], R]) -> R:
        """Send ``request``, retrying what is worth a retry, audit each attempt, and turn the
        answer's text into the result with ``finish`` (MalformedOutput when it cannot)."""
        chat_id = scope.chat_id if scope else None
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                completion = self.client.chat.completions.create(**request)
            except RETRYABLE as exc:
                self._audit(scope, purpose, messages, None, _describe(exc), None, started)
                if attempt >= self.max_retries:
                    raise LLMError(f"{purpose} failed after {attempt + 1} attempts: "
                                   f"{_describe(exc)}", chat_id=chat_id) from exc
                self._sleep(self._delay(exc, attempt))
                attempt += 1
                continue
            except openai.OpenAIError as exc:
                self._audit(scope, purpose, messages, None, _describe(exc), None, started)
                raise LLMError(f"{purpose} failed: {_describe(exc)}", chat_id=chat_id) from exc
            except json.JSONDecodeError as exc:
                # A JSON content type over a body that is not JSON: the client's decoder error.
                error = f"response body is not JSON ({exc.msg} at {exc.pos})"
                self._audit(scope, purpose, messages, None, error, None, started)
                raise MalformedOutput(f"{purpose}: {error}", chat_id=chat_id) from exc
            return self.settle(purpose, messages, completion, scope, finish, started)

    def settle(self, purpose: str, messages: list[dict[str, str]], completion: object,
               scope: Scope | None, finish: Callable[[str | None, str | None], R],
               started: float) -> R:
        """Turn a completion into the result with ``finish``, auditing it with its usage:
        MalformedOutput if it is not a chat completion or ``finish`` cannot read it, Refusal
        if the model refused."""
        chat_id = scope.chat_id if scope else None
        usage = getattr(completion, "usage", None)
        answer = _answer(completion)
        if answer is None:
            # Another content type comes back as the body's text; or JSON of another shape.
            body = completion if isinstance(completion, str) else None
            error = "response is not a chat completion"
            self._audit(scope, purpose, messages, body, error, usage, started)
            raise MalformedOutput(f"{purpose}: {error}", chat_id=chat_id)
        text, refusal = answer
        if refusal:
            self._audit(scope, purpose, messages, text, refusal, usage, started)
            raise Refusal(f"{purpose}: the model refused: {refusal}", chat_id=chat_id)
        try:
            result = finish(text, chat_id)
        except MalformedOutput as exc:
            self._audit(scope, purpose, messages, text, str(exc), usage, started)
            raise
        self._audit(scope, purpose, messages, text, None, usage, started)
        return result

    def _delay(self, exc: Exception, attempt: int) -> float:
        delay = float(self.backoff * (2 ** attempt))
        response = getattr(exc, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        if retry_after:
            with contextlib.suppress(ValueError):
                delay = max(delay, min(float(retry_after), 30.0))
        return delay

    def _audit(self, scope: Scope | None, purpose: str, messages: list[dict[str, str]],
               response: str | None, error: str | None, usage: Any, started: float) -> None:
        self.meter.add(usage)
        telemetry.llm_call(purpose=purpose, model=self.model,
                           user_id=scope.user_id if scope else None,
                           chat_id=scope.chat_id if scope else None, started=started,
                           prompt_tokens=getattr(usage, "prompt_tokens", None),
                           completion_tokens=getattr(usage, "completion_tokens", None),
                           error=error)
        if self.db is None:
            return
        with self.db.connection() as conn:
            store.insert_llm_call(
                conn, scope, purpose=purpose, model=self.model,
                request={"messages": messages}, response=response, error=error,
                prompt_tokens=getattr(usage, "prompt_tokens", None),
                completion_tokens=getattr(usage, "completion_tokens", None),
                duration_ms=(time.perf_counter() - started) * 1000,
            )


def parse(response_model: type[T], text: str | None, *, purpose: str,
          chat_id: str | None) -> T:
    if not text:
        raise MalformedOutput(f"{purpose}: empty answer", chat_id=chat_id)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedOutput(f"{purpose}: answer is not JSON ({exc.msg} at {exc.pos}): "
                              f"{text[:120]!r}", chat_id=chat_id) from exc
    try:
        return response_model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise MalformedOutput(f"{purpose}: answer does not fit {response_model.__name__}: "
                              f"{where}: {first['msg']}", chat_id=chat_id) from exc


def _text(text: str | None, chat_id: str | None) -> str:
    if not text:
        raise MalformedOutput("the model's reply is empty", chat_id=chat_id)
    return text


def _answer(completion: object) -> tuple[str | None, str | None] | None:
    """The text and the refusal of a chat completion; None if it is not one."""
    if not isinstance(completion, ChatCompletion) or not completion.choices:
        return None
    message = getattr(completion.choices[0], "message", None)
    if not isinstance(message, ChatCompletionMessage):
        return None
    text, refusal = message.content, getattr(message, "refusal", None)
    return (text if isinstance(text, str) else None,
            refusal if isinstance(refusal, str) else None)


def _describe(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    return f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "") + f": {exc}"
