"""OpenTelemetry traces and metrics, opt-in: nothing is emitted, nor is opentelemetry even
imported, until :func:`enable` is called (``Client.open`` calls it when ``MEMORY_OTEL`` is
true; ``pip install 'memory[otel]'`` brings the API in).

What is measured:

- every public call of :class:`~client.Client` (record, recall, compile, apply,
  observe, the reads; ``AsyncClient`` runs the same calls): a span ``memory.<call>`` and
  the histogram ``memory.call.duration`` (ms) by call; recall and compile add the tokens of
  what they return (``memory.tokens``, and the histogram ``memory.prompt.tokens``);
- each job run (``scheduler._scheduler.run_job``): a span ``memory.job`` and
  ``memory.job.duration``;
- each turn of a :class:`~chat.Chat`: a span ``memory.chat.turn``;
- each LLM call, each attempt: a span ``memory.llm`` with the model, purpose, tokens and
  error, the histogram ``memory.llm.duration`` and the counter ``memory.llm.tokens``.

User and chat ids are never exported: spans carry ``memory.user`` and ``memory.chat`` as
the first 16 hex digits of a sha256 (with the salt given to :func:`enable`), enough to
follow one user across spans and not to read who it is.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from engrammar.settings import Settings

__all__ = ["disable", "enable", "enable_from", "enabled", "hashed", "job", "llm_call", "span",
           "traced"]

C = TypeVar("C", bound=type)
NAME = "memory"


class _Active:
    """The tracer and instruments, once enabled."""

    def __init__(self, tracer_provider: Any, meter_provider: Any, salt: str) -> None:
        from opentelemetry import metrics, trace

        self.trace = trace
        self.tracer = (tracer_provider or trace.get_tracer_provider()).get_tracer(NAME)
        meter = (meter_provider or metrics.get_meter_provider()).get_meter(NAME)
        self.salt = salt
        self.call_ms = meter.create_histogram("memory.call.duration", unit="ms",
                                              description="Duration of a Client call")
        self.prompt_tokens = meter.create_histogram(
            "memory.prompt.tokens", unit="{token}",
            description="Tokens of a recalled block or a compiled prompt")
        self.job_ms = meter.create_histogram("memory.job.duration", unit="ms",
                                             description="Duration of a job run")
        self.llm_ms = meter.create_histogram("memory.llm.duration", unit="ms",
                                             description="Duration of an LLM call")
        self.llm_tokens = meter.create_counter("memory.llm.tokens", unit="{token}",
                                               description="Tokens of LLM calls")


_active: _Active | None = None


def enable(tracer_provider: Any = None, meter_provider: Any = None, *,
           salt: str = "") -> None:
    """Emit spans and metrics from now on, to the given providers or the global ones (which
    the app, or ``opentelemetry-instrument``, configures). Needs ``memory[otel]``."""
    global _active
    try:
        _active = _Active(tracer_provider, meter_provider, salt)
    except ModuleNotFoundError as exc:
        from engrammar.errors import ConfigError

        raise ConfigError("MEMORY_OTEL needs OpenTelemetry: pip install 'memory[otel]'"
                          ) from exc


def disable() -> None:
    global _active
    _active = None


def enabled() -> bool:
    return _active is not None


def hashed(value: str, salt: str = "") -> str:
    """What a span says of a user or chat id: 16 hex digits of sha256(salt + id)."""
    return hashlib.sha256((salt + value).encode()).hexdigest()[:16]


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[Any]:
    """A span (its OpenTelemetry object, or None when off); ``user_id``/``chat_id``
    attributes are hashed, None values left out; an exception is recorded and re-raised."""
    active = _active
    if active is None:
        yield None
        return
    attrs = _attributes(active, attributes)
    with active.tracer.start_as_current_span(name, attributes=attrs) as current:
        yield current


def _attributes(active: _Active, given: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in given.items():
        if value is None:
            continue
        if key in ("user_id", "chat_id"):
            out[f"memory.{key[:-3]}"] = hashed(str(value), active.salt)
        else:
            out[key if "." in key else f"memory.{key}"] = value
    return out


def traced(cls: C) -> C:
    """Wrap every public method of ``cls`` (a class decorator) in a span and the call
    histogram, at a cost of one global read per call while telemetry is off."""
    # Inherited ones too: a class may gather its calls from several (the client does).
    for name in dir(cls):
        method = inspect.getattr_static(cls, name)
        if name.startswith("_") or not inspect.isfunction(method) or name == "close":
            continue
        setattr(cls, name, _traced_method(name, method))
    return cls


def _traced_method(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    parameters = list(inspect.signature(method).parameters)
    places = {p: parameters.index(p) for p in ("user_id", "chat_id") if p in parameters}

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        active = _active
        if active is None:
            return method(*args, **kwargs)
        ids = {p: kwargs.get(p, args[i] if i < len(args) else None)
               for p, i in places.items()}
        started = time.perf_counter()
        error = None
        with span(f"memory.{name}", **ids) as current:
            try:
                result = method(*args, **kwargs)
            except Exception as exc:
                error = type(exc).__name__
                raise
            finally:
                attrs = {"memory.call": name, **({"error.type": error} if error else {})}
                active.call_ms.record((time.perf_counter() - started) * 1000, attrs)
            tokens = getattr(result, "tokens", None)
            if isinstance(tokens, int) and current is not None:
                current.set_attribute("memory.tokens", tokens)
                current.set_attribute("memory.budget", getattr(result, "budget", 0))
                active.prompt_tokens.record(tokens, {"memory.call": name})
            return result

    return call


@contextmanager
def job(name: str) -> Iterator[None]:
    """A job run: its span and duration."""
    active = _active
    if active is None:
        yield
        return
    started = time.perf_counter()
    with span("memory.job", job=name):
        try:
            yield
        finally:
            active.job_ms.record((time.perf_counter() - started) * 1000, {"memory.job": name})


def llm_call(*, purpose: str, model: str, user_id: str | None, chat_id: str | None,
             started: float, prompt_tokens: int | None, completion_tokens: int | None,
             error: str | None) -> None:
    """One LLM call that began at ``started`` (perf_counter) and ended now, as a span
    (back-dated to its start) and metrics."""
    active = _active
    if active is None:
        return
    elapsed = time.perf_counter() - started
    end = time.time_ns()
    attrs = _attributes(active, {"user_id": user_id, "chat_id": chat_id,
                                 "gen_ai.request.model": model, "purpose": purpose,
                                 "gen_ai.usage.input_tokens": prompt_tokens,
                                 "gen_ai.usage.output_tokens": completion_tokens,
                                 "error": error})
    current = active.tracer.start_span("memory.llm", attributes=attrs,
                                       start_time=end - int(elapsed * 1e9))
    if error:
        current.set_status(active.trace.Status(active.trace.StatusCode.ERROR, error))
    current.end(end_time=end)
    labels = {"gen_ai.request.model": model, "memory.purpose": purpose}
    active.llm_ms.record(elapsed * 1000, {**labels, **({"error.type": "error"} if error
                                                       else {})})
    for kind, n in (("input", prompt_tokens), ("output", completion_tokens)):
        if n:
            active.llm_tokens.add(n, {**labels, "gen_ai.token.type": kind})


def enable_from(settings: Settings) -> None:
    """Enable with the global providers when the settings say so (``MEMORY_OTEL=true``)."""
    if settings.otel and not enabled():
        enable(salt=settings.otel_salt)
