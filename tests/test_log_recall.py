"""Recall over the log: the index job, the per-chat copy, and the excerpt layer."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engrammar import Client, Op, Scope, Settings, store
from engrammar.models import MemoryType, Surface
from engrammar.recall._block import Block, ranking, unsay
from engrammar.recall._candidates import Recalled
from engrammar.recall._logsearch import Excerpt, asks
from engrammar.recall._ranking import Scored
from engrammar.scheduler import _blocks as blocks
from engrammar.scheduler import _index_log as index_log
from tests.conftest import T0

U, C = "u1", "c1"
LATER = T0 + timedelta(days=1)

TALK = [
    "ugh the plumber finally came, the kitchen sink leak is fixed",
    "my sister Ines is getting married in Porto next spring",
    "we watched a documentary about octopus intelligence last night",
    "work is fine, the quarterly audit wraps up on Friday",
]


def record_all(client: Client, texts: list[str], chat: str = C, role: str = "user"
               ) -> list[int]:
    return [client.record(U, chat, role, t, at=T0 + timedelta(minutes=i))
            for i, t in enumerate(texts)]


def excerpts(block: Block) -> dict[int, str]:
    """Every message the block quotes, an excerpt's reply included."""
    shown = {}
    for i in block.items:
        if i.section == "excerpt" and i.message_id is not None:
            shown[i.message_id] = i.content
            if i.reply is not None:
                shown[i.reply.message_id] = i.reply.content
    return shown


def test_an_excerpt_brings_back_what_no_memory_holds(client: Client) -> None:
    ids = record_all(client, TALK)
    assert client.memories(U, C) == []
    before = client.recall(U, C, "when is Ines's wedding?", now=LATER, record=False)
    assert excerpts(before) == {}  # not indexed yet: nothing to search
    index_log.run(client, LATER)
    block = client.recall(U, C, "when is Ines's wedding?", now=LATER, record=False)
    found = excerpts(block)
    assert ids[1] in found and found[ids[1]] == TALK[1]
    first = block.items[0]
    assert first.section == "excerpt" and first.message_id == ids[1]
    assert first.message_ids == [ids[1]] and first.said_on == T0.date().isoformat()
    assert f"{T0.date().isoformat()}, user: " in block.text
    assert block.tokens <= block.budget
    assert sum(block.layers.values()) == block.tokens and block.layers["excerpts"] > 0


def test_an_excerpt_is_left_out_when_a_memory_cites_its_message(client: Client) -> None:
    ids = record_all(client, TALK)
    index_log.run(client, LATER)
    client.apply(U, C, [Op(op="add", type="episodic", content="Sister Ines marries in Porto "
                           "next spring", evidence=[ids[1]])], now=T0)
    block = client.recall(U, C, "when is Ines's wedding?", now=LATER, record=False)
    assert any(i.memory_id is not None and ids[1] in i.message_ids for i in block.items)
    assert ids[1] not in excerpts(block)
    assert any(d.kind == "cited" and d.layer == "excerpts" and "a memory cites it" in d.reason
               for d in block.dropped)


def test_a_memory_ranks_where_its_source_message_is_found(client: Client) -> None:
    """The memory distilled from a message the query finds takes that message's place; a
    pinned memory the query does not touch stays in the block, ranked below it."""
    ids = record_all(client, TALK)
    index_log.run(client, LATER)
    client.apply(U, C, [
        Op(op="add", type="episodic", content="Ines marries next spring", evidence=[ids[1]]),
        Op(op="add", type="profile", content="Name is Dana", slot="name", pinned=True),
    ], now=T0)
    block = client.recall(U, C, "is my sister Ines getting married in Porto?", now=LATER,
                          record=False)
    kinds = [(i.memory_id is not None, i.pinned, ids[1] in i.message_ids)
             for i in block.items]
    assert kinds[0] == (True, False, True)  # the memory, where its message ranks
    assert (True, True, False) in kinds[1:]  # the pinned one: kept, not first
    assert ids[1] not in excerpts(block)


def _scored(memory_id: int, score: float, merit: float, sources: tuple[int, ...] = ()
            ) -> Scored:
    memory = Recalled(id=memory_id, type=MemoryType.episodic, surface=Surface.speak,
                      content=f"memory {memory_id}", pinned=False, salience=0.9,
                      confidence=0.9, due_at=None, created_at=T0, updated_at=T0,
                      last_reinforced_at=None, source_message_ids=sources, app_metadata={})
    return Scored(memory, score, np.zeros(8), "speak", merit=merit)


def _excerpt(message_id: int, relevance: float) -> Excerpt:
    return Excerpt(message_id, "user", T0, f"message {message_id}", relevance, 0.0, 0.0)


def test_memories_meet_excerpts_on_relevance_not_on_their_priors_lift() -> None:
    """A memory lifted by salience and recency above a message that matches the query
    better still ranks below it: an excerpt has no priors to be lifted by. A memory whose
    source the query found takes that message's place."""
    lifted = _scored(1, score=0.62, merit=0.50)
    sourced = _scored(2, score=0.30, merit=0.25, sources=(7,))
    order = ranking([lifted, sourced], [_excerpt(7, 0.70), _excerpt(8, 0.55)])
    assert [("memory", x.memory.id) if isinstance(x, Scored) else ("message", x.message_id)
            for x in order] == [("memory", 2), ("message", 7), ("message", 8), ("memory", 1)]


def test_a_memorys_text_share_is_taken_of_the_best_match_in_either_layer(
        client: Client) -> None:
    """A memory that matches one query word is not a full text match because no other
    memory matched better: a message matching every word is, and the memory's share is
    taken of that. With no log to search, it is the best of its own layer again."""
    ids = record_all(client, TALK)
    client.apply(U, C, [Op(op="add", type="episodic", content="Has a sister",
                           evidence=[ids[0]])], now=T0)
    query = "my sister Ines is getting married in Porto"
    alone = client.recall(U, C, query, now=LATER, record=False)
    index_log.run(client, LATER)
    beside = client.recall(U, C, query, now=LATER, record=False)
    memory_text = [next(i.components["text"] for i in b.items if i.memory_id is not None)
                   for b in (alone, beside)]
    message = next(i for i in beside.items if i.message_id == ids[1])
    assert memory_text[0] == 1.0 and message.components["text"] == 1.0
    assert 0 < memory_text[1] < 0.5


def test_a_reply_is_found_by_the_turn_it_answers_but_matches_it_less(
        client: Client, settings: Settings) -> None:
    """A reply's text match reads the turn before it, at a lower weight: "yes, Thursday at
    3" is found for the dentist, but the turn that names the dentist matches better, though
    read with its own context it is the longer. (Replies are not shown under their
    questions here, so that each is an excerpt of its own.)"""
    client = Client(client.db, settings=settings.model_copy(
        update={"log": settings.log.model_copy(update={"replies": False})}),
        embedder=client.embedder)
    record_all(client, TALK)  # the dentist's turn has context of its own
    asked = client.record(U, C, "assistant", "is the dentist appointment still on?",
                          at=T0 + timedelta(hours=1))
    said = client.record(U, C, "user", "yes, thursday at 3", at=T0 + timedelta(hours=2))
    index_log.run(client, LATER)
    block = client.recall(U, C, "dentist appointment", now=LATER, record=False)
    text = {i.message_id: i.components["text"] for i in block.items
            if i.section == "excerpt"}
    assert text[asked] == 1.0 and 0 < text[said] < 1.0


DOG = ["the boiler is making that clanking noise again",
       "what breed is the new dog?",
       "a beagle, we named him Rolo",
       "the weather has been grim all week"]


def test_an_excerpt_that_asks_brings_its_reply(client: Client) -> None:
    """The question the query finds is shown with the answer after it, once: the answer,
    found on its own too, is not shown a second time."""
    ids = record_all(client, DOG)
    index_log.run(client, LATER)
    block = client.recall(U, C, "what breed is the dog?", now=LATER, record=False)
    said = [i for i in block.items if i.section == "excerpt"]
    asked = next(i for i in said if i.message_id == ids[1])
    assert asked.reply is not None and asked.reply.message_id == ids[2]
    assert asked.reply.content == DOG[2] and asked.message_ids == [ids[1], ids[2]]
    assert [i.message_id for i in said].count(ids[2]) == 0
    assert f'  reply, user: "{DOG[2]}"' in block.text
    # A message that asks nothing is shown alone.
    assert all(i.reply is None for i in said if i.message_id != ids[1])
    assert block.tokens <= block.budget


def test_no_reply_that_is_hidden_or_cited(client: Client) -> None:
    """A reply is shown under the rules of any excerpt: not when it is the source of a
    memory that is forgotten, nor when a memory in the block already carries it."""
    ids = record_all(client, DOG)
    index_log.run(client, LATER)
    query = "what breed is the dog?"
    dog = client.apply(U, C, [Op(op="add", type="profile", content="Has a beagle named Rolo",
                                 evidence=[ids[2]])], now=T0).written[0]
    block = client.recall(U, C, query, now=LATER, record=False)
    asked = next(i for i in block.items if i.message_id == ids[1])
    assert asked.reply is None and asked.message_ids == [ids[1]]
    assert any(i.memory_id == dog for i in block.items)
    client.apply(U, C, [Op(op="forget", target=str(dog))], now=T0)
    block = client.recall(U, C, query, now=LATER, record=False)
    assert ids[2] not in excerpts(block) and "Rolo" not in block.text


VET = ["can you recommend a vet near Leith for my beagle Rolo?",
       "Try the Paws Clinic on Great Junction Street, they are good with nervous dogs."]


def _vet(client: Client) -> tuple[int, int]:
    """The user's question and the assistant's answer."""
    return (client.record(U, C, "user", VET[0], at=T0),
            client.record(U, C, "assistant", VET[1], at=T0 + timedelta(minutes=1)))


def test_a_reply_stays_when_a_memory_carries_its_question(client: Client) -> None:
    """The memory drawn from the question takes its place, and the reply is still shown,
    alone: the memory holds the question, not what answered it."""
    q, a = _vet(client)
    index_log.run(client, LATER)
    client.apply(U, C, [Op(op="add", type="profile", content="Has a beagle named Rolo",
                           evidence=[q])], now=T0)
    block = client.recall(U, C, "recommend a vet for my beagle Rolo", now=LATER,
                          record=False)
    assert excerpts(block) == {a: VET[1]}
    said = next(i for i in block.items if i.section == "excerpt")
    assert said.message_ids == [a] and said.role == "assistant" and said.reply is None
    assert any(d.kind == "cited" and d.message_id == q for d in block.dropped)


def test_a_pair_over_the_budget_shows_its_question_alone(client: Client) -> None:
    """The budget takes the question alone when the pair does not fit, and says the reply
    was dropped for room."""
    q, a = _vet(client)
    index_log.run(client, LATER)
    query = "recommend a vet for my beagle Rolo"
    whole = client.recall(U, C, query, now=LATER, record=False)
    assert set(excerpts(whole)) == {q, a}
    tight = client.recall(U, C, query, now=LATER, record=False,
                          budget_tokens=whole.tokens - 5)
    assert excerpts(tight) == {q: VET[0]} and tight.tokens <= whole.tokens - 5
    assert any(d.kind == "over_budget" and d.message_id == a for d in tight.dropped)


def test_a_reply_on_another_day_says_its_day(client: Client) -> None:
    asked = client.record(U, C, "user", "what breed is the new dog?", at=T0)
    client.record(U, C, "user", "a beagle, we named him Rolo", at=T0 + timedelta(days=2))
    index_log.run(client, LATER + timedelta(days=2))
    block = client.recall(U, C, "what breed is the dog?", now=LATER + timedelta(days=2),
                          record=False)
    item = next(i for i in block.items if i.message_id == asked)
    assert item.reply is not None
    later = (T0 + timedelta(days=2)).date().isoformat()
    assert item.reply.said_on == later and f"  reply on {later}, user: " in block.text


def test_what_asks() -> None:
    assert asks("what breed is the new dog?") and asks("is it on?? I hope so")
    assert asks('she said "are you coming?" and left')
    assert asks("犬の種類は？") and asks("ما اسم الكلب؟")
    assert not asks("the link is example.com/page?id=3&x=1")
    assert not asks("a beagle, we named him Rolo")


def test_never_topics_and_forgotten_sources_stay_hidden(client: Client) -> None:
    ids = record_all(client, [*TALK, "the divorce papers arrived today, so that's done",
                              "I adopted a grey cat called Miso"])
    request = client.record(U, C, "user", "please forget about the cat, it is a sore subject",
                            at=T0 + timedelta(minutes=9))
    index_log.run(client, LATER)
    query = "anything about the divorce or the cat?"
    shown = excerpts(client.recall(U, C, query, now=LATER, record=False))
    assert ids[4] in shown and ids[5] in shown  # found, before any rule hides them
    client.apply(U, C, [Op(op="add", type="protocol", surface="never",
                           content="Does not want their divorce brought up")], now=T0)
    cat = client.apply(U, C, [Op(op="add", type="profile", content="Has a grey cat, Miso",
                                 evidence=[ids[5]])], now=T0).written[0]
    client.apply(U, C, [Op(op="forget", target=str(cat), evidence=[request])], now=T0)
    block = client.recall(U, C, query, now=LATER, record=False)
    shown = excerpts(block)
    assert ids[4] not in shown and ids[5] not in shown and request not in shown
    assert "divorce" not in block.text and "Miso" not in block.text


def test_the_assistants_reply_to_a_forgotten_message_is_hidden_with_it(
        client: Client) -> None:
    said = client.record(U, C, "user", "I've been on lithium since the spring, is grapefruit "
                         "ok?", at=T0)
    reply = client.record(U, C, "assistant", "Grapefruit is generally fine with lithium, "
                          "but keep your salt and fluids steady.", at=T0 + timedelta(minutes=1))
    later = client.record(U, C, "assistant", "Grapefruit season is in winter.",
                          at=T0 + timedelta(minutes=3))
    index_log.run(client, LATER)
    query = "grapefruit and lithium"
    assert {said, reply} <= set(excerpts(client.recall(U, C, query, now=LATER, record=False)))
    med = client.apply(U, C, [Op(op="add", type="profile", content="Takes lithium",
                                 evidence=[said])], now=T0).written[0]
    client.apply(U, C, [Op(op="forget", target=str(med))], now=T0)
    block = client.recall(U, C, query, now=LATER, record=False)
    assert "lithium" not in block.text
    # what the assistant said later, not in reply to it, stays
    assert later in excerpts(block)


def test_a_system_message_between_is_no_reply(client: Client) -> None:
    """The assistant's answer to a forgotten message is hidden though a system message
    (an app's note) was recorded between them."""
    said = client.record(U, C, "user", "I take sertraline, is coffee ok?", at=T0)
    client.record(U, C, "system", "tool: none", at=T0 + timedelta(seconds=30))
    answer = client.record(U, C, "assistant", "Coffee is usually fine with sertraline.",
                           at=T0 + timedelta(minutes=1))
    index_log.run(client, LATER)
    med = client.apply(U, C, [Op(op="add", type="profile", content="Takes sertraline",
                                 evidence=[said])], now=T0).written[0]
    client.apply(U, C, [Op(op="forget", target=str(med))], now=T0)
    block = client.recall(U, C, "coffee and sertraline", now=LATER, record=False)
    assert said not in excerpts(block) and answer not in excerpts(block)
    assert "sertraline" not in block.text


def test_only_this_chats_log(client: Client) -> None:
    record_all(client, ["my sister Ines is getting married in Porto next spring"],
               chat="other")
    mine = record_all(client, ["the kitchen sink leak is fixed"])
    index_log.run(client, LATER)
    block = client.recall(U, C, "Ines wedding in Porto", now=LATER, record=False)
    assert set(excerpts(block)) <= set(mine)
    assert "Porto" not in block.text


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=0, max_value=400))
def test_the_block_never_exceeds_its_budget(client: Client, budget: int) -> None:
    if not client.memories(U, C):
        record_all(client, (TALK + DOG) * 3)  # (DOG asks: excerpts with replies)
        client.apply(U, C, [Op(op="add", type="profile", content="Lives in Lisbon",
                               pinned=True)], now=T0)
        index_log.run(client, LATER)
    block = client.recall(U, C, "Ines wedding, the audit, the plumber, the new dog?", now=LATER,
                          budget_tokens=budget, record=False)
    assert block.tokens <= max(budget, block.budget)
    assert client.counter.count(block.text) == block.tokens
    assert block.tokens <= budget or all(i.pinned for i in block.items)


def test_compile_carries_excerpts_but_not_the_window_again(client: Client) -> None:
    old = record_all(client, TALK)
    index_log.run(client, LATER)
    turn = client.compile(U, C, "when is Ines's wedding?", now=LATER, budget_tokens=1000,
                          record=False)
    said = [i for i in turn.items if i.section == "excerpt"]
    # The four messages are the window's raw turns, already in the prompt verbatim.
    assert said == []
    assert any(TALK[1] == m["content"] for m in turn.messages)
    recent = [client.record(U, C, r, f"turn {i}", at=LATER + timedelta(minutes=i))
              for i in range(12) for r in ("user", "assistant")]
    assert recent
    blocks.run(client, LATER + timedelta(hours=1))  # older turns fold into block summaries
    turn = client.compile(U, C, "when is Ines's wedding?", now=LATER + timedelta(hours=1),
                          budget_tokens=1000, record=False)
    said = [i for i in turn.items if i.section == "excerpt"]
    assert [i.message_id for i in said][:1] == [old[1]]
    memory_block = next(m["content"] for m in turn.messages
                        if m["role"] == "system" and "<memory>" in m["content"])
    assert "Porto" in memory_block and turn.tokens <= 1000


def test_erase_drops_the_log_copy(client: Client, settings: Settings) -> None:
    record_all(client, TALK)
    index_log.run(client, LATER)
    elsewhere = Client(client.db, settings=settings, embedder=client.embedder)
    assert excerpts(elsewhere.recall(U, C, "Ines wedding Porto", now=LATER, record=False))
    client.erase_chat(U, C)
    assert client.logs.forget(U, C) == 0  # the erase dropped this process's copy
    fresh = record_all(client, ["we repainted the hallway a pale green"])
    index_log.run(client, LATER)
    # Another process's copy sees the chat begun anew and reads it again.
    for reader in (client, elsewhere):
        block = reader.recall(U, C, "Ines wedding Porto", now=LATER, record=False)
        assert set(excerpts(block)) <= set(fresh) and "Porto" not in block.text


def test_the_job_indexes_in_batches_resumes_and_is_idempotent(
        client: Client, settings: Settings) -> None:
    small = Client(client.db, settings=settings.model_copy(
        update={"log": settings.log.model_copy(update={"batch": 3})}),
        embedder=client.embedder)
    ids = record_all(small, [f"message number {i} about topic {i}" for i in range(7)])
    system = small.record(U, C, "system", "be brief", at=T0 + timedelta(minutes=8))
    late = small.record(U, C, "user", "said tomorrow", at=LATER + timedelta(days=1))
    report = index_log.run(small, LATER)
    assert (report.batches, report.messages, report.embedded) == (3, 8, 7)
    with small.db.connection() as conn:
        rows = store.log_rows(conn, Scope(user_id=U, chat_id=C), 0, late)
        through = conn.execute("SELECT indexed_through FROM chats").fetchone()
    assert [r[0] for r in rows] == ids and through == (system,)
    again = index_log.run(small, LATER)
    assert (again.messages, again.embedded) == (0, 0)
    resumed = index_log.run(small, LATER + timedelta(days=2))
    assert (resumed.messages, resumed.embedded) == (1, 1)
    with small.db.connection() as conn:
        assert [r[0] for r in store.log_rows(conn, Scope(user_id=U, chat_id=C), 0,
                                             late)] == [*ids, late]


def test_a_copy_grown_by_new_messages_ranks_as_one_read_whole(
        client: Client, settings: Settings) -> None:
    record_all(client, TALK)
    index_log.run(client, LATER)
    query = "what about Ines, the plumber and the octopus documentary?"
    client.recall(U, C, query, now=LATER, record=False)  # this process now holds a copy
    more = ["Ines wants the wedding by the sea", "the plumber charged too much",
            "octopuses have three hearts, apparently"]
    for i, text in enumerate(more):
        client.record(U, C, "assistant" if i % 2 else "user", text,
                      at=LATER + timedelta(minutes=i))
    index_log.run(client, LATER + timedelta(hours=1))
    grown = client.recall(U, C, query, now=LATER + timedelta(hours=1), record=False)
    whole = Client(client.db, settings=settings, embedder=client.embedder).recall(
        U, C, query, now=LATER + timedelta(hours=1), record=False)
    assert len(excerpts(grown)) > len(TALK)
    assert grown.text == whole.text and grown.items == whole.items


def test_a_summary_sentence_drawn_from_a_hidden_message_is_unsaid() -> None:
    summary = ("Talked about an ex, Jordan, who still has the record player. "
               "Started a pottery class on Wednesdays.")
    hidden = ["my ex Jordan still has my record player, long story"]
    assert unsay(summary, hidden) == "Started a pottery class on Wednesdays."
    assert unsay(summary, []) == summary
    assert unsay("Short one. Ok.", hidden) == "Short one. Ok."
