"""The write gate alone: pure decisions on Memory objects and real embeddings, no database."""

from __future__ import annotations

from typing import Any

import pytest

from engrammar import LocalEmbedder
from engrammar.models import (
    DEFAULT_SURFACE,
    Decision,
    Memory,
    MemoryType,
    Op,
    OpKind,
    Surface,
    Tense,
)
from engrammar.settings import GateSettings
from engrammar.write._gate import Gate
from engrammar.write._pool import Pool
from engrammar.write._statement import lexical
from engrammar.write._target import Candidate
from tests.conftest import T0

P = MemoryType.profile
PREF = MemoryType.preference
EPISODIC = MemoryType.episodic
LOOP = MemoryType.open_loop


@pytest.fixture(scope="module")
def gate() -> Gate:
    return Gate(GateSettings())


def memory(memory_id: int, content: str, kind: MemoryType = P, *, slot: str | None = None,
           pinned: bool = False) -> Memory:
    return Memory(id=memory_id, user_id="u1", chat_id="c1", type=kind, content=content,
                  confidence=0.8, salience=0.6, pinned=pinned, surface=DEFAULT_SURFACE[kind],
                  slot=slot, created_at=T0, updated_at=T0)


def pool_of(embedder: LocalEmbedder, *memories: Memory) -> list[Candidate]:
    vectors = embedder.embed([m.content for m in memories])
    return [Candidate(m, v) for m, v in zip(memories, vectors, strict=True)]


def decide(gate: Gate, embedder: LocalEmbedder, op: Op, pool: list[Candidate],
           handles: dict[str, int] | None = None) -> Decision:
    vector = embedder.embed([op.content])[0] if op.content else None
    decision = gate.decide(op, vector, pool, handles)
    assert decision.proposed == op  # the op as it came in, whatever the gate made of it
    # The writer hands the gate the pool's shortlist, not the whole pool: the same decision.
    shortlist = Pool(pool, gate.s).shortlist(op, vector, handles)
    assert gate.decide(op, vector, shortlist, handles) == decision
    return decision


def add(content: str, kind: MemoryType | None = P, **fields: Any) -> Op:
    return Op(op=OpKind.add, type=kind, content=content, **fields)


def assert_rejected(d: Decision, code: str) -> None:
    assert not d.accepted, d
    assert d.code == code and d.op is None and d.target_id is None
    assert d.reason


# -- thresholds ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("op", "code"), [
    (add("Short"), "too_short"),
    (add("Works as a nurse", confidence=0.39), "low_confidence"),
    (add("Works as a nurse", salience=0.19), "low_salience"),
    (add("Feels tired today", MemoryType.ephemeral, salience=0.5), "ephemeral_low_salience"),
    (add("Works as a nurse", None), "missing_type"),
    (Op(op=OpKind.update, type=P, content="Nurse", target="1"), "too_short"),
    (Op(op=OpKind.update, content="Works as a teacher", target="1", confidence=0.1),
     "low_confidence"),
    (Op(op=OpKind.contradict, target="1", confidence=0.2), "low_confidence"),
])
def test_below_a_threshold_is_rejected_with_its_code(gate: Gate, embedder: LocalEmbedder,
                                                     op: Op, code: str) -> None:
    pool = pool_of(embedder, memory(1, "Works as a nurse"))
    assert_rejected(decide(gate, embedder, op, pool), code)


@pytest.mark.parametrize("op", [
    add("Eight ch"),  # exactly min_chars
    add("Works as a nurse", confidence=0.4, salience=0.2),
    add("Feels tired today", MemoryType.ephemeral, salience=0.6),
])
def test_at_the_threshold_is_accepted(gate: Gate, embedder: LocalEmbedder, op: Op) -> None:
    d = decide(gate, embedder, op, [])
    assert d.accepted and d.op is not None and d.op.op is OpKind.add and d.target_id is None
    assert d.op.surface is DEFAULT_SURFACE[op.type or P]  # the type's default surface


# -- duplicates, paraphrases and slots ------------------------------------------------------------

def test_lexical_duplicate_is_a_reinforce(gate: Gate, embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Works as a nurse"), memory(2, "Has a dog named Rex"))
    op = add("has a dog named Rex!")
    assert lexical(op.content, "Has a dog named Rex") >= GateSettings().lexical_duplicate
    # No vector at all: the words alone make it a duplicate.
    d = gate.decide(op, None, pool)
    assert d.accepted and d.code == "duplicate" and d.target_id == 2
    assert d.op is not None and d.op.op is OpKind.reinforce


def test_paraphrase_is_a_reinforce(gate: Gate, embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Likes green tea", PREF),
                   memory(2, "User lives in Berlin"))
    op = add("They're based in Berlin")
    assert lexical(op.content, "User lives in Berlin") < GateSettings().lexical_duplicate
    d = decide(gate, embedder, op, pool)
    assert d.accepted and d.code == "duplicate" and d.target_id == 2
    assert d.op is not None and d.op.op is OpKind.reinforce


def test_words_a_memory_already_says_in_the_same_order_reinforce_it(
        gate: Gate, embedder: LocalEmbedder) -> None:
    # The same messages read again another night: an answer the first reading joined to a
    # correction, the asides ("(asked ...)", a day) the other reading did or did not add.
    cat = memory(1, 'Has a cat called Mairéad. Grand, asleep on the radiator as per usual. '
                    '(asked "How\'s she keeping?")')
    won = memory(2, "Their jerk chicken won best jerk at the Labor Day cookout last year. "
                    '(asked "Want a line about their signature dish?") (last year, 2025-01-01)',
                 EPISODIC)
    pool = pool_of(embedder, cat, won)
    for content, kind, target in (
            ("Grand, asleep on the radiator as per usual.", PREF, 1),
            ("Their jerk chicken won best jerk at the Labor Day cookout last year "
             "(last year, 2025-01-01)", EPISODIC, 2)):
        d = decide(gate, embedder, add(content, kind), pool)
        assert d.accepted and d.code == "duplicate" and d.target_id == target, content
        assert d.op is not None and d.op.op is OpKind.reinforce
    # The claim denied is no restatement.
    d = decide(gate, embedder, add("Never asleep on the radiator as per usual", PREF), pool)
    assert d.code != "duplicate", d.reason


def test_two_boundaries_in_one_wording_are_two(gate: Gate, embedder: LocalEmbedder) -> None:
    # (the second boundary of a chat was taken for the first one said again)
    rule = MemoryType.protocol
    ex = memory(1, "Never mention their ex", rule).model_copy(
        update={"surface": Surface.avoid})
    dad = memory(2, "Does not want their dad brought up", rule).model_copy(
        update={"surface": Surface.never})
    pool = pool_of(embedder, ex, dad)
    for content, surface in (("Never mention their sister", Surface.avoid),
                             ("Does not want their weight brought up", Surface.never)):
        op = add(content, rule, surface=surface)
        assert max(lexical(content, m.memory.content) for m in pool) \
            >= GateSettings().lexical_duplicate
        d = decide(gate, embedder, op, pool)
        assert d.accepted and d.code == "ok" and d.op is not None and d.op.op is OpKind.add
    # the same boundary said again is still one, and a style said in other words too
    d = decide(gate, embedder, add("never mention their ex!", rule, surface=Surface.avoid),
               pool)
    assert d.accepted and d.code == "duplicate" and d.target_id == 1
    style = pool_of(embedder, memory(3, "Asked: no emojis in your answers", rule))
    d = decide(gate, embedder, add("Asked: no emojis in replies", rule), style)
    assert d.accepted and d.code == "duplicate" and d.target_id == 3


def test_a_statement_naming_more_is_no_restatement(gate: Gate, embedder: LocalEmbedder
                                                    ) -> None:
    # Close in words or meaning (over the lexical or the paraphrase threshold), but one
    # names a person or a thing the other does not: two facts, not one said twice.
    cases = [("Jon's favorite dance style is contemporary.",
              "Gina's favorite dance style is contemporary."),
             ("Went to the LGBTQ support group on Friday", "Went to the support group")]
    for new, old in cases:
        a, b = embedder.embed([new, old])
        assert (float(a @ b) >= GateSettings().paraphrase_duplicate
                or lexical(new, old) >= GateSettings().lexical_duplicate), (new, old)
        d = decide(gate, embedder, add(new, EPISODIC), pool_of(embedder, memory(1, old,
                                                                                 EPISODIC)))
        assert d.accepted and d.code == "ok", (new, d.reason)


def test_same_template_new_value_is_an_update_not_a_duplicate(gate: Gate,
                                                              embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "User lives in Berlin"))
    op = add("User lives in Paris")
    # MiniLM puts Paris closer to Berlin than the true paraphrase: only the values tell.
    paris, berlin, based = embedder.embed([op.content, "User lives in Berlin",
                                           "They're based in Berlin"])
    assert float(paris @ berlin) > float(based @ berlin)
    d = decide(gate, embedder, op, pool)
    assert d.accepted and d.code == "same_slot" and d.target_id == 1
    assert d.op is not None and d.op.op is OpKind.update and d.op.type is P


def test_explicit_slot_with_a_new_value_is_an_update(gate: Gate,
                                                     embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Name is Dana", slot="name"),
                   memory(2, "Lives in Berlin", slot="home"))
    # A different wording, so no template match: the slot alone says it is the same fact.
    d = decide(gate, embedder, add("Moved to Munich last spring", slot="home"), pool)
    assert d.accepted and d.code == "same_slot" and d.target_id == 2
    assert d.op is not None and d.op.op is OpKind.update and d.op.slot == "home"
    # The same slot and the same value restated: a reinforce.
    d = decide(gate, embedder, add("Is based in Berlin", slot="home"), pool)
    assert d.accepted and d.code == "duplicate" and d.target_id == 2
    assert d.op is not None and d.op.op is OpKind.reinforce


def test_a_slot_value_said_in_part_reinforces(gate: Gate, embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Lives in Easton, Bristol with Marta", slot="home"))
    # "we're still in easton": part of the value, in lower case, is no new home.
    d = decide(gate, embedder, add("Lives in easton", slot="home"), pool)
    assert d.accepted and d.target_id == 1
    assert d.op is not None and d.op.op is OpKind.reinforce
    # A word the memory does not have is a new value: an update.
    d = decide(gate, embedder, add("Lives in Clifton", slot="home"), pool)
    assert d.accepted and d.code == "same_slot" and d.target_id == 1
    assert d.op is not None and d.op.op is OpKind.update


@pytest.mark.parametrize(("old", "new", "kind"), [
    ("Has a friend named Lena", "Has a friend named Omar", P),
    # a second son, a second dog: one of many, named
    ("User's son is called Dara", "Has a son named Cillian", P),
    ("Has a dog named Rolo", "Their dog is called Biscuit", P),
    # another person's husband or partner is no new name for the user's
    ("Has a husband named Dave", "Jo's husband is called Mark", P),
    ("Jo's wife is called Roisin", "Has a wife named Niamh", P),
    ("Likes Italian food", "Likes Thai food", PREF),
    ("Speaks German", "Speaks Spanish", P),
])
def test_a_second_value_of_a_many_valued_fact_is_an_add(gate: Gate, embedder: LocalEmbedder,
                                                        old: str, new: str,
                                                        kind: MemoryType) -> None:
    # One template, other values, no slot: a second friend does not replace the first.
    pool = pool_of(embedder, memory(1, old, kind))
    d = decide(gate, embedder, add(new, kind), pool)
    assert d.accepted and d.code == "ok" and d.target_id is None
    assert d.op is not None and d.op.op is OpKind.add


@pytest.mark.parametrize(("old", "new"), [
    ("Works at Siemens", "Works at Bosch"),
    ("Name is Dana", "Name is Dee"),
    ("Favorite band is Muse", "Favorite band is Blur"),
    # the old value said with more words of it (the flat), the new one bare
    ("Lives in a terraced house in Chorlton, Manchester", "Lives in Didsbury"),
    # one wife at a time, however her name is put, with the memory's "User's" no value
    ("User's wife is called Roisin", "Has a wife named Niamh"),
    ("Their mum's name is Brenda", "Mum is called Bernadette"),
    # two homes each described in words of its own, the old one as another tool wrote it
    ("The user lives in a student flat near Leeds Beckett campus.",
     "Lives in a rented terrace in Headingley with two friends"),
    ("User works at a bakery in Cardiff Bay.", "Works at the council offices in Newport"),
])
def test_a_new_value_of_a_single_valued_fact_is_an_update(gate: Gate, embedder: LocalEmbedder,
                                                          old: str, new: str) -> None:
    pool = pool_of(embedder, memory(1, old))
    d = decide(gate, embedder, add(new), pool)
    assert d.accepted and d.code == "same_slot" and d.target_id == 1
    assert d.op is not None and d.op.op is OpKind.update


@pytest.mark.parametrize(("old", "new"), [
    ("Lives with their partner Sam", "Lives in Leeds"),
    ("Works as a nurse at the Royal", "Works at Tesco"),
    ("Lives in Leeds", "Lives with their partner Sam in Bradford"),
])
def test_a_template_that_says_another_thing_is_no_new_value(gate: Gate,
                                                            embedder: LocalEmbedder,
                                                            old: str, new: str) -> None:
    # (with whom they live is not where; what they work as is not where)
    pool = pool_of(embedder, memory(1, old))
    d = decide(gate, embedder, add(new), pool)
    assert d.op is None or d.op.op is not OpKind.update, d


def test_same_slot_of_another_type_is_not_the_same_fact(gate: Gate,
                                                        embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Likes to be called Dee", MemoryType.shared_lore,
                                    slot="name"))
    d = decide(gate, embedder, add("Name is Dana", slot="name"), pool)
    assert d.accepted and d.code == "ok" and d.target_id is None
    assert d.op is not None and d.op.op is OpKind.add


@pytest.mark.parametrize(("old", "new"), [
    ("Likes coffee", "Doesn't like coffee"),
    ("Doesn't like coffee", "Likes coffee"),
    ("Likes coffee", "Dislikes coffee"),
    ("Likes coffee", "No longer likes coffee"),
])
def test_negation_is_not_a_duplicate_but_contradicts(gate: Gate, embedder: LocalEmbedder,
                                                     old: str, new: str) -> None:
    # Never a reinforce; the same claim with the opposite polarity retires the old one.
    pool = pool_of(embedder, memory(1, old, PREF))
    d = decide(gate, embedder, add(new, PREF), pool)
    assert d.accepted and d.code == "opposite" and d.target_id == 1
    assert d.op is not None and d.op.op is OpKind.contradict and d.op.content == new


def test_opposite_polarity_about_something_else_is_an_add(gate: Gate,
                                                          embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Likes coffee", PREF))
    d = decide(gate, embedder, add("Dislikes horror movies", PREF), pool)
    assert d.accepted and d.code == "ok" and d.target_id is None
    assert d.op is not None and d.op.op is OpKind.add


@pytest.mark.parametrize(("old", "new"), [
    ("Does the school run every morning", "Does not do the school run anymore"),
    ("Eats spicy food with almost every meal", "Cannot eat spicy anymore since their ulcer"),
    ("Lives on a narrowboat on the Kennet and Avon canal",
     "Not living on the canal anymore, the winters were too much"),
    ("Works as a mechanic at a garage in Swansea", "Is not at the garage no more"),
    ("Smokes about ten cigarettes a day", "Used to smoke"),
])
def test_a_doing_said_to_be_over_supersedes_it(gate: Gate, embedder: LocalEmbedder,
                                               old: str, new: str) -> None:
    pool = pool_of(embedder, memory(1, old))
    d = decide(gate, embedder, add(new), pool)
    assert d.accepted and d.code == "ended" and d.target_id == 1
    assert d.op is not None and d.op.op is OpKind.update and d.op.content == new


@pytest.mark.parametrize(("old", "new"), [
    # a word of its own: another, narrower claim
    ("Smokes about ten cigarettes a day", "Does not smoke indoors anymore cos of the baby"),
    # someone else's
    ("Works as a barista at a cafe in Cardiff Bay",
     "Their sister does not work at the cafe anymore"),
    # no mark of an end: maybe for now ("not driving this weekend")
    ("Drives for Uber part-time at weekends", "Does not drive"),
    ("Is vegetarian", "Does not even miss bacon anymore lol"),
    # a past habit of the opposite, and "used to" as an adjective
    ("Likes coffee", "Used to hate coffee, now loves it"),
    ("Works night shifts", "Is used to night shifts"),
    ("Works night shifts at the hospital", "Used to the night shifts now"),
    # a quantity, a pause, a limit
    ("Likes eating out", "Cannot eat any more"),
    ("Is a big coffee drinker", "Does not drink coffee anymore during lent"),
    ("Walks their dog twice a day", "Walks the dog no more than twice a day now"),
    # narrower: one of several things, a time of day, another sense of a stem
    ("Likes cats and dogs", "Does not like dogs anymore after getting bitten"),
    ("Is a big coffee drinker", "No more coffee for them after 3pm"),
    ("Works as a train driver", "Not training anymore, too tired"),
    # a pause, or a change of company
    ("Likes baking", "No more baking for now, their oven's broken"),
    ("Swims at the lido every saturday", "No more swimming at the lido, it's shut till june"),
    ("Does the school run every morning", "No longer doing the school run on their own"),
])
def test_a_negation_that_does_not_end_the_doing_leaves_it(gate: Gate, embedder: LocalEmbedder,
                                                         old: str, new: str) -> None:
    pool = pool_of(embedder, memory(1, old))
    d = decide(gate, embedder, add(new), pool)
    assert d.accepted and d.code != "ended"
    assert d.op is not None and d.op.op not in (OpKind.update, OpKind.contradict)


@pytest.mark.parametrize(("old", "new", "surface"), [
    ("Asked: no emojis", "Asked: you can use emojis again", Surface.adapt),
    ("Asked: don't use bullet points",
     "Asked: actually you can use bullet points again, easier to skim on my phone",
     Surface.adapt),
    ("Never mention their ex", "Asked: you can talk about my ex", Surface.avoid),
    ("Does not want their dad brought up", "Asked: you may bring up my dad again",
     Surface.never),
])
def test_a_rule_of_reply_turned_over_supersedes_the_old(gate: Gate, embedder: LocalEmbedder,
                                                        old: str, new: str,
                                                        surface: Surface) -> None:
    rule = memory(1, old, MemoryType.protocol).model_copy(update={"surface": surface})
    d = decide(gate, embedder, add(new, MemoryType.protocol), pool_of(embedder, rule))
    assert d.accepted and d.code == "ended" and d.target_id == 1
    assert d.op is not None and d.op.op is OpKind.update


@pytest.mark.parametrize(("old", "new"), [
    ("Never mention their ex", "Asked: you can mention my sister"),
    ("Asked: no emojis", "Asked: no emojis in work emails"),
    ("Asked: keep answers short", "Asked: answer in Spanish"),
    # an exception to the old rule, not its turn
    ("Asked: don't use bullet points", "Asked: use bullet points for recipes tho"),
    ("Asked: no emojis", "Asked: ok you can use emojis when we're just joking around"),
    ("Asked: use emojis", "Asked: dont use emojis in work emails"),
    # a boundary named with more than what it keeps out, or after another topic
    ("Does not want their dad brought up",
     "Asked: you can bring up my dads side of the family"),
    ("Never mention their ex", "Asked: you can mention my sister, just leave my ex out"),
])
def test_a_rule_of_reply_about_another_thing_stands_beside(gate: Gate,
                                                           embedder: LocalEmbedder,
                                                           old: str, new: str) -> None:
    pool = pool_of(embedder, memory(1, old, MemoryType.protocol))
    d = decide(gate, embedder, add(new, MemoryType.protocol), pool)
    assert d.accepted and d.code != "ended"


def test_unrelated_add_is_accepted_as_is(gate: Gate, embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "User lives in Berlin"), memory(2, "Likes coffee", PREF))
    op = add("Has a dog named Rex", confidence=0.9, salience=0.7, surface=Surface.factcheck)
    d = decide(gate, embedder, op, pool)
    assert d.accepted and d.code == "ok" and d.target_id is None
    assert d.op == op  # nothing to fill in: the op goes through unchanged


# -- targets: close_loop, forget, handles, update ---------------------------------------------

@pytest.fixture(scope="module")
def mixed(embedder: LocalEmbedder) -> list[Candidate]:
    return pool_of(
        embedder,
        memory(1, "Has a mom named Rita"),
        memory(2, "Promised to call mom on Friday", LOOP),
        memory(3, "Loves the coffee shop on Main Street", PREF),
        memory(4, "Plans to renew the passport", LOOP),
        memory(5, "Works as a nurse", slot="job"),
    )


def test_close_loop_without_target_matches_the_open_loop(gate: Gate, embedder: LocalEmbedder,
                                                         mixed: list[Candidate]) -> None:
    d = decide(gate, embedder, Op(op=OpKind.close_loop, content="called mom yesterday"), mixed)
    # Memory 1 is about mom too, but only an open loop can be closed.
    assert d.accepted and d.target_id == 2 and d.code == "ok"
    assert d.op is not None and d.op.op is OpKind.close_loop


def test_close_loop_naming_a_memory_that_is_no_loop_falls_back_to_matching(
        gate: Gate, embedder: LocalEmbedder, mixed: list[Candidate]) -> None:
    op = Op(op=OpKind.close_loop, target="m1", content="called mom yesterday")
    d = decide(gate, embedder, op, mixed, {"m1": 1, "m2": 2})
    assert d.accepted and d.target_id == 2


def test_close_loop_with_nothing_matching_is_kept_as_the_event_it_reports(
        gate: Gate, embedder: LocalEmbedder, mixed: list[Candidate]) -> None:
    # "Finished the tax return" closes nothing here, but it happened: never dropped.
    op = Op(op=OpKind.close_loop, content="finished the tax return", evidence=[7])
    for pool in (mixed, []):
        d = decide(gate, embedder, op, pool)
        assert d.accepted and d.code == "redecided" and d.target_id is None
        assert d.op is not None and d.op.op is OpKind.add and d.op.type is EPISODIC
        assert d.op.content == "finished the tax return" and d.op.evidence == [7]
        assert d.reason.startswith("close_loop: no open loop matches")
    # With nothing said, there is nothing to keep: that one is rejected, with its reason.
    assert_rejected(decide(gate, embedder, Op(op=OpKind.close_loop), mixed), "no_open_loop")


def test_close_loop_with_a_wrong_target_is_redecided(gate: Gate, embedder: LocalEmbedder,
                                                     mixed: list[Candidate]) -> None:
    handles = {"m2": 2, "m4": 4}
    # Aimed at the passport loop, it says it called mom: it closes the call.
    aimed = Op(op=OpKind.close_loop, target="m4", content="called mom yesterday")
    d = decide(gate, embedder, aimed, mixed, handles)
    assert d.accepted and d.target_id == 2 and d.op is not None
    assert d.op.op is OpKind.close_loop
    # Aimed at the passport loop, it says something no loop is about: kept as an event.
    other = Op(op=OpKind.close_loop, target="m4", content="Watched Dune at the cinema")
    d = decide(gate, embedder, other, mixed, handles)
    assert d.accepted and d.code == "redecided" and d.target_id is None
    assert d.op is not None and d.op.op is OpKind.add and d.op.type is EPISODIC


def test_a_past_tense_report_closes_the_open_loop_it_matches(
        gate: Gate, embedder: LocalEmbedder, mixed: list[Candidate]) -> None:
    report = add("Called mom yesterday", EPISODIC, tense=Tense.past, evidence=[9])
    d = decide(gate, embedder, report, mixed)
    assert d.accepted and d.code == "closes_loop" and d.target_id == 2
    assert d.op is not None and d.op.op is OpKind.close_loop
    assert d.op.content == "Called mom yesterday" and d.op.evidence == [9]
    done = decide(gate, embedder, add("Renewed the passport", EPISODIC, tense=Tense.past),
                  mixed)
    assert done.code == "closes_loop" and done.target_id == 4
    # The same words with no tense known are a plain statement: nothing is closed on a guess.
    plain = decide(gate, embedder, add("Called mom yesterday", EPISODIC), mixed)
    assert plain.code == "ok" and plain.op is not None and plain.op.op is OpKind.add


def test_a_report_of_several_sentences_needs_the_cosine_to_close_a_plan(
        gate: Gate, embedder: LocalEmbedder) -> None:
    # cosine 0.37-0.40 with "kids" and "season" in common: one sentence closes the plan on
    # the shared words; several say more than a resolution, and close it by cosine alone
    pool = pool_of(embedder, memory(1, "Plans to take the kids to the first match of the "
                                       "season", LOOP))
    one = add("Went to the season opener with my dad, the kids stayed home", EPISODIC,
              tense=Tense.past)
    assert decide(gate, embedder, one, pool).code == "closes_loop"
    several = add("Went to the season opener with my dad. The kids stayed home.", EPISODIC,
                  tense=Tense.past)
    d = decide(gate, embedder, several, pool)
    assert d.code == "ok" and d.op is not None and d.op.op is OpKind.add


def test_a_report_of_several_sentences_naming_the_plan_first_closes_it(
        gate: Gate, embedder: LocalEmbedder) -> None:
    # The thing done first, naming the name the plan writes (in its own case), then what
    # comes next: the plan is done, whatever the cosine of the whole (0.35-0.5 here).
    pool = pool_of(embedder, memory(1, "Is taking the GRE general test on Saturday", LOOP))
    report = add("Did the gre this morning. Got 320 overall. Now which universities should "
                 "they apply to for a masters", P, tense=Tense.past)
    d = decide(gate, embedder, report, pool)
    assert d.code == "closes_loop" and d.target_id == 1, d
    # and, saying more than the plan done, it stays: the event that supersedes the plan
    assert d.op is not None and d.op.op is OpKind.update and d.op.type is EPISODIC
    assert "320" in d.op.content
    # Named beside a thing done about it, it is no report of it done.
    for said in ("Helped my sister with her GRE prep this morning. She is so nervous.",
                 "Talked to Priya about the GRE. She did it last year."):
        d = decide(gate, embedder, add(said, P, tense=Tense.past), pool)
        assert d.code != "closes_loop", d
    # Named only after its first sentence, it is another thing: kept, nothing closed.
    later = add("Cooked a big curry last night. My flatmate is doing the GRE too.", P,
                tense=Tense.past)
    d = decide(gate, embedder, later, pool)
    assert d.code != "closes_loop", d
    # A word of greeting or joy before it is no first sentence of what was done.
    greeted = add("Yessss!! Did the gre this morning, 320 overall. Now they need to sort "
                  "visas, flights, a flat and a laptop before September", P,
                  tense=Tense.past)
    assert decide(gate, embedder, greeted, pool).code == "closes_loop"


@pytest.mark.parametrize("content", ["Sold my road bike last weekend",
                                     "Called the plumber about the leak",
                                     "Grew up near Porto"])
def test_a_past_tense_report_with_no_open_loop_is_kept(gate: Gate, embedder: LocalEmbedder,
                                                       mixed: list[Candidate],
                                                       content: str) -> None:
    for pool in (mixed, []):
        d = decide(gate, embedder, add(content, EPISODIC, tense=Tense.past), pool)
        assert d.accepted and d.code == "ok" and d.target_id is None
        assert d.op is not None and d.op.op is OpKind.add and d.op.type is EPISODIC


def test_a_plan_said_in_the_past_tense_is_no_report(gate: Gate, embedder: LocalEmbedder,
                                                   mixed: list[Candidate]) -> None:
    # "Promised to call mom" is itself the loop: restated, it reinforces it.
    d = decide(gate, embedder, add("Promised to call mom on Friday", LOOP, tense=Tense.past),
               mixed)
    assert d.code == "duplicate" and d.target_id == 2


def test_forget_by_content_matches_the_memory(gate: Gate, embedder: LocalEmbedder,
                                              mixed: list[Candidate]) -> None:
    d = decide(gate, embedder, Op(op=OpKind.forget, content="that coffee shop"), mixed)
    assert d.accepted and d.target_id == 3
    assert d.op is not None and d.op.op is OpKind.forget


def test_forget_matching_nothing_is_an_unknown_target(gate: Gate, embedder: LocalEmbedder,
                                                      mixed: list[Candidate]) -> None:
    op = Op(op=OpKind.forget, content="the quarterly budget spreadsheet")
    assert_rejected(decide(gate, embedder, op, mixed), "unknown_target")


@pytest.mark.parametrize("op", [
    Op(op=OpKind.reinforce, target="m9"),
    Op(op=OpKind.contradict, target="m9"),
    Op(op=OpKind.forget, target="m9"),
    Op(op=OpKind.reinforce, target="42"),  # a memory id that is not in this chat
    Op(op=OpKind.reinforce, target="not a handle"),
    Op(op=OpKind.reinforce),
])
def test_unknown_target_with_nothing_said_is_rejected(gate: Gate, embedder: LocalEmbedder,
                                    mixed: list[Candidate], op: Op) -> None:
    assert_rejected(decide(gate, embedder, op, mixed, {"m1": 1, "m5": 5}), "unknown_target")


@pytest.mark.parametrize(("target", "handles"), [
    ("m5", {"m5": 5}), (" m5 ", {"m5": 5}),
    ("5", None), ("#5", None),  # ids, from callers with no handles (imports, admins)
])
def test_handles_and_ids_resolve(gate: Gate, embedder: LocalEmbedder, mixed: list[Candidate],
                                 target: str, handles: dict[str, int] | None) -> None:
    d = decide(gate, embedder, Op(op=OpKind.reinforce, target=target), mixed, handles)
    assert d.accepted and d.target_id == 5 and d.code == "ok"


@pytest.mark.parametrize("target", ["5", "#5"])
def test_an_id_is_no_handle(gate: Gate, embedder: LocalEmbedder, mixed: list[Candidate],
                            target: str) -> None:
    # A model shown handles that writes "5" for m5 must not hit whichever memory has id 5.
    d = decide(gate, embedder, Op(op=OpKind.reinforce, target=target), mixed, {"m1": 1})
    assert_rejected(d, "unknown_target")


@pytest.mark.parametrize("content", ["Works as a nurse", "works as a nurse."])
def test_update_restating_its_target_is_a_reinforce(gate: Gate, embedder: LocalEmbedder,
                                                    mixed: list[Candidate],
                                                    content: str) -> None:
    op = Op(op=OpKind.update, type=P, content=content, target="m5")
    d = decide(gate, embedder, op, mixed, {"m5": 5})
    assert d.accepted and d.code == "unchanged" and d.target_id == 5
    assert d.op is not None and d.op.op is OpKind.reinforce


def test_update_inherits_its_targets_type_and_surface(gate: Gate, embedder: LocalEmbedder,
                                                      mixed: list[Candidate]) -> None:
    op = Op(op=OpKind.update, content="Plans to renew the passport next month", target="m4")
    d = decide(gate, embedder, op, mixed, {"m4": 4})
    assert d.accepted and d.target_id == 4 and d.code == "ok"
    assert d.op is not None and d.op.op is OpKind.update
    assert d.op.type is LOOP and d.op.surface is Surface.continue_


def test_contradict_without_replacement_retires_its_target(gate: Gate, embedder: LocalEmbedder,
                                                           mixed: list[Candidate]) -> None:
    d = decide(gate, embedder, Op(op=OpKind.contradict, target="m5"), mixed, {"m5": 5})
    assert d.accepted and d.target_id == 5
    assert d.op is not None and d.op.op is OpKind.contradict and d.op.content == ""


def test_decisions_do_not_depend_on_unrelated_pool_members(gate: Gate,
                                                           embedder: LocalEmbedder) -> None:
    base = [memory(1, "User lives in Berlin")]
    noise = [memory(10 + i, f"Has a friend named Friend{i} from school", P) for i in range(20)]
    op = add("They're based in Berlin")
    alone = decide(gate, embedder, op, pool_of(embedder, *base))
    crowded = decide(gate, embedder, op, pool_of(embedder, *noise, *base))
    assert alone == crowded
    assert alone.target_id == 1 and alone.code == "duplicate"


def test_candidate_without_vector_is_compared_by_words(gate: Gate,
                                                       embedder: LocalEmbedder) -> None:
    pool = [Candidate(memory(1, "User lives in Berlin"), None)]
    d = decide(gate, embedder, add("User lives in Berlin"), pool)
    assert d.accepted and d.code == "duplicate" and d.target_id == 1



def test_forget_needs_a_shared_word_or_a_close_paraphrase(gate: Gate,
                                                           embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Works as a nurse"),
                   memory(2, "Loves the coffee shop on Main Street", PREF))
    vague = decide(gate, embedder, Op(op=OpKind.forget, content="the hospital"), pool)
    assert_rejected(vague, "unknown_target")
    named = decide(gate, embedder, Op(op=OpKind.forget, content="that coffee shop"), pool)
    assert named.accepted and named.target_id == 2


# -- statements aimed at no memory, or at the wrong one, are decided against the pool -----------

@pytest.mark.parametrize("target", ["m9", None, "m3"])  # unknown, none, the coffee shop
def test_an_update_aimed_at_no_memory_finds_the_one_it_changes(
        gate: Gate, embedder: LocalEmbedder, mixed: list[Candidate], target: str | None) -> None:
    op = Op(op=OpKind.update, type=P, content="Works as a teacher", slot="job", target=target)
    d = decide(gate, embedder, op, mixed, {"m3": 3, "m5": 5})
    assert d.accepted and d.code == "found_target" and d.target_id == 5
    assert d.op is not None and d.op.op is OpKind.update


def test_a_change_never_lands_on_what_its_own_message_said(gate: Gate,
                                                           embedder: LocalEmbedder) -> None:
    # "ran my first 10k on saturday ... only took up running after I quit smoking": the
    # quitting is no change of the race written from the same message a moment before
    race = memory(1, "Ran their first 10k on saturday, only took up running after they "
                     "quit smoking", EPISODIC).model_copy(update={"source_message_ids": [7]})
    quit_ = Op(op=OpKind.contradict, content="Quit smoking", evidence=[7])
    d = decide(gate, embedder, quit_, pool_of(embedder, race))
    assert d.target_id != 1 and d.code != "found_target"
    # from another message, it is the change of the memory it is about
    d = decide(gate, embedder, quit_.model_copy(update={"evidence": [8]}),
               pool_of(embedder, race))
    assert d.target_id == 1


def test_a_word_said_without_its_accent_is_the_same_word(gate: Gate,
                                                       embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Works as a barista at a café in Leith", slot="job"),
                   memory(2, "Lives in Leith", slot="home"))
    quit_ = Op(op=OpKind.contradict, content="Jacked in the cafe job", evidence=[8])
    d = decide(gate, embedder, quit_, pool)
    assert d.accepted and d.code == "found_target" and d.target_id == 1


def test_a_moved_day_updates_the_old_day(gate: Gate, embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Book club is every other Thursday at the Crown"),
                   memory(2, "Reading Piranesi next in book club"),
                   memory(3, "Works as a nurse", slot="job"))
    op = Op(op=OpKind.update, content="Book club moved to Wednesdays")
    d = decide(gate, embedder, op, pool)
    assert d.accepted and d.code == "found_target" and d.target_id == 1
    assert d.op is not None and d.op.op is OpKind.update and d.op.type is P


def test_a_corrected_count_and_a_sold_car_update_the_old_value(gate: Gate,
                                                               embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Has two kids"), memory(2, "Owns a red Mini Cooper"),
                   memory(3, "Lives in Leeds", slot="home"))
    kids = decide(gate, embedder, Op(op=OpKind.update, content="Has three kids"), pool)
    assert kids.code == "found_target" and kids.target_id == 1
    sold = Op(op=OpKind.update, type=EPISODIC, content="Sold the Mini", tense=Tense.past)
    d = decide(gate, embedder, sold, pool)
    assert d.accepted and d.target_id == 2 and d.op is not None
    # The sale is the new state of things, an event; the car leaves the active set.
    assert d.op.op is OpKind.update and d.op.type is EPISODIC


def test_a_stop_that_names_what_a_memory_names_retires_it(gate: Gate,
                                                         embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder,
                   memory(1, "Works night shifts picking at the Ocado warehouse in Erith"),
                   memory(2, "Lives in Erith with two cats", slot="home"))
    # (MiniLM: 0.30 to the job; the name in common says which memory it ends)
    stop = Op(op=OpKind.contradict, content="Finally binned off Ocado")
    d = decide(gate, embedder, stop, pool)
    assert d.accepted and d.target_id == 1 and d.op is not None
    assert d.op.op is OpKind.contradict


def test_a_name_is_a_word_capitalised_inside_a_sentence_not_a_day_or_a_sentences_first(
) -> None:
    from engrammar.write._statement import shares_name

    assert shares_name("finally binned off ocado", "Works at the Ocado warehouse")
    assert not shares_name("Stopped swimming on friday", "Gets a takeaway every Friday night")
    assert not shares_name("stopped walks", "Has a dog named Rex. Walks him daily")


def test_a_change_about_nothing_in_the_pool_is_kept_as_a_statement(
        gate: Gate, embedder: LocalEmbedder, mixed: list[Candidate]) -> None:
    for kind in (OpKind.update, OpKind.contradict, OpKind.reinforce):
        op = Op(op=kind, content="Has a dog named Rex", target="m9")
        d = decide(gate, embedder, op, mixed, {"m1": 1})
        assert d.accepted and d.code == "redecided" and d.target_id is None
        assert d.op is not None and d.op.op is OpKind.add and d.op.type is P
        assert d.reason.startswith(f"{kind.value}: unknown target (m9)")


def test_a_reinforce_aimed_wrong_reinforces_what_it_restates(
        gate: Gate, embedder: LocalEmbedder, mixed: list[Candidate]) -> None:
    op = Op(op=OpKind.reinforce, target="m1", content="Loves the coffee shop on Main Street")
    d = decide(gate, embedder, op, mixed, {"m1": 1})
    assert d.accepted and d.code == "duplicate" and d.target_id == 3
    assert d.op is not None and d.op.op is OpKind.reinforce
    assert "is about something else" in d.reason


def test_a_statement_re_decided_still_meets_the_thresholds(
        gate: Gate, embedder: LocalEmbedder, mixed: list[Candidate]) -> None:
    low = Op(op=OpKind.close_loop, content="finished the tax return", confidence=0.2)
    assert_rejected(decide(gate, embedder, low, mixed), "low_confidence")
    short = Op(op=OpKind.update, content="Nurse!", target="m9")
    assert_rejected(decide(gate, embedder, short, mixed, {"m1": 1}), "too_short")


def test_a_resolution_on_record_said_again_is_no_new_event(gate: Gate,
                                                           embedder: LocalEmbedder) -> None:
    closed = memory(7, "Promised to call mom on Friday", LOOP).model_copy(
        update={"status": "archived", "metadata": {"closed_reason": "close_loop",
                                                   "resolution": "called mom yesterday"}})
    for op in (Op(op=OpKind.close_loop, content="Called mom yesterday!"),
               add("called mom yesterday", EPISODIC, tense=Tense.past)):
        vector = embedder.embed([op.content])[0]
        d = gate.decide(op, vector, [], None, [closed])
        assert_rejected(d, "already_resolved")
        assert "open loop 7" in d.reason
        # Another thing done is still an event of its own.
        other = op.model_copy(update={"content": "called the plumber about the leak"})
        kept = gate.decide(other, embedder.embed([other.content])[0], [], None, [closed])
        assert kept.accepted and kept.op is not None and kept.op.op is OpKind.add


def test_a_new_value_followed_by_a_detail_still_updates(gate: Gate,
                                                        embedder: LocalEmbedder) -> None:
    # An answer joined to the fact it details ("how's Tassie?" "bloody freezing") leaves
    # the claim the first sentence makes, which is what holds one value.
    pool = pool_of(embedder, memory(1, "Lives in Perth, Western Australia"))
    d = decide(gate, embedder, add("Lives in Hobart. Bloody freezing mate."), pool)
    assert d.accepted and d.code == "same_slot" and d.target_id == 1


def test_a_thing_done_the_turn_model_passes_over_only_closes_its_plan(
        gate: Gate, embedder: LocalEmbedder) -> None:
    # The parser's resolution of a message its turn model judged not worth keeping carries
    # that doubt as its confidence: it closes the plan it matches, alone it is no memory.
    from tests.test_offline import ops_for

    (op,) = [o for o in ops_for("cleaned the kitchen") if o.op is OpKind.close_loop]
    assert op.confidence < GateSettings().min_confidence
    plan = pool_of(embedder, memory(1, "Plans to clean the kitchen before the party", LOOP))
    d = decide(gate, embedder, op, plan)
    assert d.accepted and d.target_id == 1 and d.op is not None
    assert d.op.op is OpKind.close_loop
    assert_rejected(decide(gate, embedder, op, []), "low_confidence")


def test_a_message_does_not_settle_the_plan_it_states(gate: Gate,
                                                      embedder: LocalEmbedder) -> None:
    # "Booked the flights to Lisbon. Still need to book the flights home": one message,
    # a thing done and a plan; the plan stays open.
    plan = memory(1, "Plans to book the flights home from Lisbon", LOOP).model_copy(
        update={"source_message_ids": [7]})
    pool = pool_of(embedder, plan)
    done = Op(op=OpKind.close_loop, content="booked the flights to Lisbon", evidence=[7])
    d = decide(gate, embedder, done, pool)
    assert d.op is not None and d.op.op is not OpKind.close_loop, d
    # from another message, the same words close it
    later = decide(gate, embedder, done.model_copy(update={"evidence": [9]}), pool)
    assert later.op is not None and later.op.op is OpKind.close_loop
    assert later.target_id == 1


def test_a_claim_alone_restates_the_claim_with_its_detail(gate: Gate,
                                                           embedder: LocalEmbedder) -> None:
    # the detail's "never" does not deny the claim before it
    pool = pool_of(embedder, memory(1, "Is a total night owl. Never asleep before 2am."))
    d = decide(gate, embedder, add("Is a night owl"), pool)
    assert d.op is not None and d.op.op is OpKind.reinforce and d.target_id == 1, d


def test_a_claim_with_a_detail_is_no_restatement_of_the_bare_claim(
        gate: Gate, embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Eats meat"))
    d = decide(gate, embedder, add("Eats meat. Not anymore, went vegetarian in March."), pool)
    assert d.op is not None and d.op.op is not OpKind.reinforce, d


def test_a_report_citing_the_plans_message_beside_its_own_closes_it(
        gate: Gate, embedder: LocalEmbedder) -> None:
    plan = memory(1, "Plans to renew the passport", LOOP).model_copy(
        update={"source_message_ids": [3]})
    done = Op(op=OpKind.close_loop, content="renewed the passport", evidence=[3, 7])
    d = decide(gate, embedder, done, pool_of(embedder, plan))
    assert d.op is not None and d.op.op is OpKind.close_loop and d.target_id == 1, d


def test_a_doing_and_the_one_who_does_it_share_a_stem() -> None:
    from engrammar.write._statement import shares_stem

    # "Left teaching" is about "Works as a maths teacher"; "Quit smoking" about "Smokes"
    assert shares_stem("Left teaching in July", "Works as a maths teacher in Croydon")
    assert shares_stem("Quit smoking last month", "Smokes about ten a day")
    assert not shares_stem("Left teaching in July", "Drinks four cups of coffee a day")


def test_a_stop_shares_a_short_noun_with_the_habit_it_ends() -> None:
    from engrammar.write._statement import shares_stem

    # a word of three letters names the thing as often as a longer one ("gym", "car")
    assert shares_stem("Has stopped going to the gym", "Goes to the gym five mornings a week")
    assert shares_stem("Sold the car in May", "Drives an old car to work")
    # a function word of three letters is no thing in common
    assert not shares_stem("Has given up for now", "Goes for a run before work")


def test_a_stop_aimed_at_nothing_ends_the_habit_it_names(
        gate: Gate, embedder: LocalEmbedder) -> None:
    pool = pool_of(embedder, memory(1, "Goes to the gym five mornings a week"))
    stop = Op(op=OpKind.contradict, content="Has stopped going to the gym", confidence=0.8)
    d = decide(gate, embedder, stop, pool)
    assert d.op is not None and d.op.op is OpKind.contradict and d.target_id == 1, d
