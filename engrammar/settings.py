"""Configuration. The only module that reads the environment (prefix ``MEMORY_``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from engrammar.errors import ConfigError


class GateSettings(BaseModel):
    """Thresholds of the write gate; nothing below them is written."""

    min_chars: int = 8
    min_confidence: float = 0.4
    min_salience: float = 0.2
    min_ephemeral_salience: float = 0.6
    # rapidfuzz token_set_ratio (0-100) at or above which an add restates a memory.
    lexical_duplicate: float = 90.0
    # Cosine at or above which two texts say the same thing, unless their values conflict.
    # MiniLM scores "lives in Lisbon" / "works at a bakery in Lisbon" 0.68, so lower is unsafe.
    paraphrase_duplicate: float = 0.80
    # Cosine enough for a duplicate when both make the same claim (predicate and values).
    paraphrase_floor: float = 0.55
    # Cosine at or above which two memories of one type and slot are about the same thing.
    same_topic: float = 0.45
    # Cosine a resolution must reach to close an open loop it does not name.
    close_loop_match: float = 0.35
    # Cosine a forget request must reach to archive a memory it shares no word with.
    forget_match: float = 0.6
    # Cosine a past-tense report must reach to close an open loop nobody named: stricter than
    # close_loop_match, since no extractor said it resolves anything. MiniLM: "called mom
    # yesterday" / "Promised to call mom on Friday" 0.77, "Renewed the passport" / "Plans to
    # renew the passport" 0.86, "Called the plumber" / the call to mom 0.19.
    report_match: float = 0.5
    # Cosine a change with no (or a wrong) target must reach, with a content word shared, to
    # update the memory it is about: "Sold the Mini" / "Owns a red Mini Cooper" 0.40, "Book
    # club moved to Wednesdays" / "Book club is every other Thursday" 0.70. Sharing no word,
    # it needs paraphrase_floor. Below both, the change is kept as a statement of its own.
    change_match: float = 0.35
    # Cosine enough for a contradiction that names what the memory names ("Amazon", "the
    # Jazz"): a name in common says what it is about where the rest of the words differ.
    # MiniLM: "Finally packed in Amazon" / "Works nights at the Amazon warehouse" 0.33.
    change_named_match: float = 0.25


class ScoreWeights(BaseModel):
    """How much the priors may bend relevance (recall._ranking.score): a memory scores
    relevance x (1 + salience_w x salience + confidence_w x confidence + recency_w x
    recency) + urgency_w x urgency, each in [0, 1]. With these weights the priors lift a
    memory by 15% of its relevance at most, so they order memories that match the query
    about as well and never lift one that does not; an open loop coming due gains up to
    0.2, about what a loosely related memory scores. Recency weighs 0: an old fact is no
    less true for its age (updates and lifecycle retire what is out of date), so recency
    only breaks ties."""

    salience: float = Field(default=0.10, ge=0)
    confidence: float = Field(default=0.05, ge=0)
    recency: float = Field(default=0.0, ge=0)
    urgency: float = Field(default=0.20, ge=0)

    def lift(self) -> float:
        """The largest lift the priors can give a memory, as a share of its relevance."""
        return self.salience + self.confidence + self.recency


class RecallSettings(BaseModel):
    budget_tokens: int = 600
    top_k: int = 24
    # How cosine and full-text rank fuse into a memory's relevance (recall._ranking): BM25's
    # share. A memory kept in the speaker's words matches a question by its words as a
    # message does (the log's weight is 0.75). End to end on the LoCoMo dev split, recall@5
    # 59.4 at 0.25, 60.2 at 0.4, 60.5 at 0.5, 60.1 at 0.6, 59.7 at 0.75; three of the four
    # conversations gain and none loses. The fixtures are the same at 0.25 and 0.5 once a
    # match by meaning alone keeps its bar (``min_cosine``). It is a trade: memories that
    # paraphrase what was said (an LLM extractor's, LoCoMo's observations imported as
    # memories: ``bench locomo --mode observations``) lose at 0.5 (recall@5 59.2 at 0.25,
    # 57.8 at 0.4, 56.5 at 0.5); set 0.25 when an LLM writes the memories.
    text_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    # A `speak` memory surfaced in any of the last N recalls of a chat is demoted to `adapt`.
    cooldown_recalls: int = 2
    # Days over which a due open loop's urgency ramps up to 1.
    urgency_horizon_days: float = Field(default=7.0, gt=0)
    summaries: int = 2
    # Active memories a process keeps in memory for recall, over all chats, one chat taking
    # half at most (recall._snapshot); 0 scans in PostgreSQL every time. 200,000 memories
    # with 384-d vectors: ~400 MB.
    cache_memories: int = 200_000
    # And their bytes (estimated: vectors, postings, columns, and a chat's own overhead, so
    # copies of chats with no memories count too). The three per-process caches (this, the
    # log copies' and the token counts') default to 240 MB together.
    cache_bytes: int = Field(default=96 * 2**20, ge=0)
    # Below this relevance, a memory that is not always relevant (see retriever) is left
    # out, unless its cosine alone reaches ``min_cosine``: a memory that matches by meaning
    # and shares no word ("kids milestones for the baby book" and a daughter's first tooth)
    # is not cut for the text weight it has no part of. 0.2 is the bar such a memory had
    # when text weighed 0.25 (0.15 / 0.75).
    min_semantic: float = 0.15
    min_cosine: float = Field(default=0.2, ge=0.0, le=1.0)


class LogSettings(BaseModel):
    """Recall over the log (recall._logsearch): verbatim excerpts of earlier conversation."""

    # The most excerpts a block carries (0: no excerpt layer). They share the block's budget
    # with the memories, ranked among them by relevance.
    excerpts: int = Field(default=10, ge=0)
    # BM25's share of a message's relevance, against cosine (recall._ranking.relevance):
    # three quarters, where memories give it one. A turn of conversation is a fragment
    # ("yes, last Friday!") that the sentence embedder places poorly, while a memory is a
    # whole statement; on the ten LoCoMo conversations dense retrieval trails BM25 over turns
    # (39.3 against 52.0 recall@5) and fusing the two equally still loses to BM25 alone
    # (49.3), in the dataset's published reference figures. End to end on the dev split:
    # recall@5 55.7 at 0.5, 58.7 at 0.65, 58.7 at 0.75, 58.2 at 1.0.
    text_weight: float = Field(default=0.75, ge=0.0, le=1.0)
    # What a word of the message before counts, against one of the message's own, in a
    # message's text match: a reply is read with the turn it answers, at half weight
    # (recall._logsearch), so the turn itself still matches better than the reply.
    context_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    # Whether an excerpt that asks something shows the message after it, the reply
    # (recall._logsearch): the question alone holds no answer. It costs the reply's tokens.
    replies: bool = True
    # A longer message is cut to this many tokens in its excerpt (a reply too).
    excerpt_tokens: int = Field(default=120, ge=8)
    # Messages the index job embeds per transaction (a crash keeps the batches done).
    batch: int = Field(default=256, ge=1)
    # Messages a process keeps in memory for excerpts, over all chats (384-d: ~2 KB each
    # with their text and postings).
    cache_messages: int = Field(default=200_000, ge=0)
    # And their bytes (estimated as for recall's copies). A chat may take half: a longer
    # one is held from its newest messages back (its older ones are then not quoted).
    cache_bytes: int = Field(default=128 * 2**20, ge=0)


class DecaySettings(BaseModel):
    """Half-life in days of each memory type (recall._decay): recency halves in one, and
    ephemeral and episodic memories go stale, open loops close, after one without
    reference. The other types never go stale by decay."""

    profile: float = Field(default=365.0, gt=0, allow_inf_nan=False)
    preference: float = Field(default=180.0, gt=0, allow_inf_nan=False)
    episodic: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    open_loop: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    shared_lore: float = Field(default=365.0, gt=0, allow_inf_nan=False)
    protocol: float = Field(default=365.0, gt=0, allow_inf_nan=False)
    reflection: float = Field(default=90.0, gt=0, allow_inf_nan=False)
    ephemeral: float = Field(default=3.0, gt=0, allow_inf_nan=False)


class LifecycleSettings(BaseModel):
    """The lifecycle rules that are not decay (for those, see DecaySettings)."""

    # An open loop with a due date closes this long after it.
    open_loop_grace_days: float = 2
    # A stale memory is archived this long after it went stale.
    archive_after_stale_days: float = 30


class ContextSettings(BaseModel):
    budget_tokens: int = 2000
    block_pairs: int = 5
    raw_pairs: int = 4
    # Pairs past the raw tail and a full block that wait before the block is made, so a
    # block is not summarised the moment it fills (a chat may override it, as the two above).
    trigger_offset: int = Field(default=0, ge=0)
    # When more blocks than this are active, the oldest `merge_blocks` fold into one.
    max_active_blocks: int = 6
    merge_blocks: int = 4
    # Shares of the budget left after the system prompt and the user message; the window
    # gets the rest, and whatever the other layers leave unused.
    memory_share: float = 0.35
    summary_share: float = 0.10


class ScheduleSettings(BaseModel):
    """The scheduler's time zone and misfire grace. Any other key is a job's cron expression
    (minute hour day month day_of_week) overriding its default in ``jobs/registry.py``:
    ``MEMORY_SCHEDULE__EXTRACT="0 2 * * *"``. The job names and expressions are checked
    when the scheduler is built (``scheduler._scheduler.triggers``), where the jobs are known."""

    model_config = ConfigDict(extra="allow")

    timezone: str = "UTC"
    misfire_grace_seconds: int = 3600

    def overrides(self) -> dict[str, object]:
        """The per-job cron expressions given, by job name (lower case)."""
        return {key.lower(): value for key, value in (self.model_extra or {}).items()}


TypeName = Literal["profile", "preference", "episodic", "open_loop", "shared_lore",
                   "protocol", "reflection", "ephemeral"]


class ScopeSettings(BaseModel):
    """Which memories a user's chats share. A memory of a type in ``user_wide`` belongs to
    the user: every chat of theirs recalls it (bar a chat marked private), and a chat that
    learns the fact again updates or reinforces the one memory. The rest belong to the chat
    that learnt them. ``MEMORY_SCOPES__USER_WIDE='["profile", "preference"]'``; the default
    shares nothing, every chat its own."""

    user_wide: list[TypeName] = Field(default_factory=list)


class FreshSettings(BaseModel):
    """Memory before the night: what makes a session's words count the same day."""

    # The idle-extract job extracts a chat whose newest message is at least this many
    # minutes old and past its watermark (0: the job does nothing).
    idle_minutes: float = Field(default=20.0, ge=0)
    # Embed each message at ``record`` (one embedder call on the turn's path), so the log
    # excerpts find the same day's words at once instead of after the index job.
    embed_at_record: bool = False


class Settings(BaseSettings):
    """Every setting, read from ``MEMORY_*`` environment variables (nested ones with ``__``:
    ``MEMORY_GATE__MIN_CONFIDENCE``) or given as keyword arguments. A value that does not
    fit raises :class:`~engrammar.errors.ConfigError` naming the variable and what it
    expects."""

    model_config = SettingsConfigDict(
        env_prefix="MEMORY_", env_nested_delimiter="__", extra="ignore"
    )

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise ConfigError(describe(exc)) from None

    database_url: str | None = None
    data_dir: Path = Field(default_factory=lambda: Path.cwd() / ".memory")
    pool_min: int = 1
    pool_max: int = 8
    # A lost database: a new connection gives up after db_connect_timeout seconds, a call
    # waits at most db_timeout seconds for a working connection (then DatabaseError), and
    # the pool stops retrying in the background after db_reconnect_seconds, so the next
    # call after a restart connects at once (runtime._database.Database).
    db_connect_timeout: float = Field(default=2.0, gt=0)
    db_timeout: float = Field(default=2.0, gt=0)
    db_reconnect_seconds: float = Field(default=1.0, gt=0)

    embedder: Literal["local", "openai"] = "local"
    # onnxruntime threads of the local embedder (unset: every core). W extraction workers
    # on a machine of N cores: N / W each, or their threads fight over the cores.
    embedder_threads: int | None = Field(default=None, ge=1)
    # The local embedder's weight matrices multiplied in int8 where the CPU has int8 dot
    # products (runtime._int8): ~3/4 of the time, vectors within a cosine of 0.998 of the
    # float products'. False: float products everywhere (the vectors of before).
    embedder_int8: bool = True
    # Concurrent calls of the local embedder share model calls (runtime._batcher): at most
    # embedder_calls model calls at a time per process, each of at most embedder_batch
    # texts (1: every call its own model call).
    embedder_batch: int = Field(default=32, ge=1)
    embedder_calls: int = Field(default=1, ge=1)
    embedding_model: str = "text-embedding-3-small"
    embedding_dim: int | None = None

    llm: Literal["none", "openai"] = "none"
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_model: str = "gpt-4o-mini"
    llm_timeout: float = 30.0
    llm_max_retries: int = 3
    llm_context_tokens: int = 6000
    # Price per million prompt and completion tokens, by model, for the jobs' reports:
    # MEMORY_LLM_PRICES='{"gpt-4o-mini": [0.15, 0.60]}'. A model not here reports no cost.
    llm_prices: dict[str, tuple[float, float]] = Field(default_factory=dict)
    # MEMORY_LLM_BATCH=1: the extract job submits the night's chats as an OpenAI batch and
    # collects finished batches (nightly._batch), at half the price, instead of calling the
    # model chat by chat.
    llm_batch: bool = False

    # OpenTelemetry spans and metrics (runtime._telemetry; pip install 'memory[otel]'), and
    # the salt of the hashed user and chat ids they carry.
    otel: bool = False
    otel_salt: str = ""

    tokenizer: str | None = None
    # Bytes of token counts a process keeps (keyed by a digest, never the text itself).
    token_cache_bytes: int = Field(default=16 * 2**20, ge=0)
    max_message_chars: int = 32_000
    # Caps on what a caller or a model may write: one memory's content, and the ops one
    # model answer may propose (more fails that chat's extraction, reported with its id).
    max_memory_chars: int = Field(default=2_000, ge=1)
    max_ops_per_answer: int = Field(default=100, ge=1)

    # The HTTP service (engrammar.service): the largest request body it reads, in bytes
    # (an import file included); past it, 413.
    service_max_body: int = Field(default=8 << 20, ge=1024)

    gate: GateSettings = GateSettings()
    weights: ScoreWeights = ScoreWeights()
    recall: RecallSettings = RecallSettings()
    log: LogSettings = LogSettings()
    decay: DecaySettings = DecaySettings()
    lifecycle: LifecycleSettings = LifecycleSettings()
    context: ContextSettings = ContextSettings()
    schedule: ScheduleSettings = ScheduleSettings()
    scopes: ScopeSettings = ScopeSettings()
    fresh: FreshSettings = FreshSettings()


def describe(exc: ValidationError) -> str:
    """One line per bad value: the environment variable, what it expects, what it got."""
    lines = []
    for error in exc.errors():
        loc = [str(part) for part in error["loc"] if not str(part).isdigit()]
        name = "MEMORY_" + "__".join(loc).upper() if loc else "MEMORY_*"
        got = error.get("input")
        shown = "" if isinstance(got, dict) else f", got {got!r}"
        lines.append(f"{name}: {error['msg'].lower()}{shown}")
    return "; ".join(lines)
