"""Values corrected in place (parser._corrections): the memory holding the old value gets a
new version with the new one when it was stored on an earlier night; a fact proposed from a
message earlier in the same batch is proposed with the new value, the old one never written;
a number said without taking anything back corrects nothing, nor does one said of an event."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engrammar import Client, Status
from engrammar.extract.parser._corrections import Correction, corrections
from engrammar.extract.parser._nlp import parse
from engrammar.models import MemoryType
from engrammar.scheduler import _extract as extract
from tests.conftest import T0

NIGHT1 = T0 + timedelta(hours=14)
NIGHT2 = NIGHT1 + timedelta(days=1)


def found(text: str) -> list[Correction]:
    (doc,) = parse([text])
    return corrections(doc)


def test_a_value_negated_beside_one_of_its_kind_is_corrected() -> None:
    assert found("no, the dog is Biscuit not Pickle") == [Correction(new="Biscuit",
                                                                    old="Pickle")]
    assert found("we've got 2 cats, not 3") == [Correction(new="2", old="3")]
    # A negation of no value of that kind corrects nothing.
    assert found("I do not like Mondays") == []


def test_a_name_the_tagger_does_not_know_is_still_a_name() -> None:
    # An unseen spelling is tagged a noun or a verb; its capital mid-sentence says name.
    assert found("my surname is Kowalski, not Kowalsky") == [
        Correction(new="Kowalski", old="Kowalsky")]
    assert found("it's Kowalski not Kowalsky") == [Correction(new="Kowalski", old="Kowalsky")]
    assert found("I'm not Keen on it") == []


def test_an_adverb_between_the_value_and_its_negation_is_looked_past() -> None:
    # "only", "now", "actually" stress the new value; the old one is still set beside it.
    assert found("the party is on Saturday now, not Sunday") == [
        Correction(new="Saturday", old="Sunday")]
    assert found("her name is Priya actually, not Pria") == [
        Correction(new="Priya", old="Pria")]


def test_a_count_corrects_only_when_something_is_taken_back() -> None:
    (count,) = found("oh sorry, it's five grandchildren now")
    assert count.new == "five" and "grandchildren" in count.noun
    assert count.apply("Has four grandchildren", MemoryType.profile) == "Has five grandchildren"
    # The count of an event or a plan is its own: another run does not correct it.
    assert count.apply("Visited four grandchildren in May", MemoryType.episodic) is None
    assert found("two of my grandchildren are coming for lunch") == []


def test_a_value_asked_back_and_said_again_is_corrected() -> None:
    # by its question mark or its order; the parser may run the answer into the question
    assert found("wait did I say 3? 2. my brain is fried") == [
        Correction(new="2", old="3", states_only=True)]
    assert found("Wait did I say 3. 2. long day") == [
        Correction(new="2", old="3", states_only=True)]
    assert found("did I say Mia? Nia, sorry") == [
        Correction(new="Nia", old="Mia", states_only=True)]
    # no question, or no value of its kind after it: nothing corrected
    assert found("I said 3. Then we left at 4") == []
    assert found("did I say that? yes 2 kids") == []


def test_a_value_cited_back_then_said_again_is_corrected() -> None:
    # the old value, as "you" or "I" said or called it, then "it's" the new one
    assert found("lol you called my dog Bruno yesterday. its Bruce!") == [
        Correction(new="Bruce", old="Bruno", states_only=True)]
    assert found("I told you 4 nephews last week, didn't I? It's 5, I forgot the baby") == [
        Correction(new="5", old="4", states_only=True)]
    # a value cited with nothing put right after it corrects nothing
    assert found("you called my dog Bruno yesterday. He loved it") == []


def told(client: Client, first: str, then: str) -> list[str]:
    """The chat's active memories after ``first`` one night and ``then`` the next."""
    client.record("u1", "c1", "user", first, at=T0)
    extract.run(client, now=NIGHT1)
    client.record("u1", "c1", "user", then, at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    return [m.content for m in client.memories("u1", "c1", ["active"])]


@pytest.mark.parametrize("then", ["ha no, its Orla, the wife. no idea where that came from",
                                  "that's Orla, my wife, by the way"])
def test_who_someone_is_said_to_be_names_them(client: Client, then: str) -> None:
    active = told(client, "my wife is called Grainne", then)
    assert any("wife named Orla" in c for c in active), active
    assert not any("Grainne" in c for c in active), active


def test_what_a_correcting_message_tells_besides_is_kept(client: Client) -> None:
    active = told(client, "I have 3 nephews, all football mad", "wait did I say 3? 4. My "
                  "sister had a baby boy in March and they named him Oisín")
    assert any("4 nephews" in c for c in active), active
    assert any("Oisín" in c for c in active), active


def test_a_count_asked_back_on_a_later_night_corrects_the_stored_one(client: Client) -> None:
    client.record("u1", "c1", "user", "I've got 3 kids, all under ten", at=T0)
    extract.run(client, now=NIGHT1)
    client.record("u1", "c1", "user", "wait did I say 3? 2. my brain is fried",
                  at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    active = [m.content for m in client.memories("u1", "c1", [Status.active.value])]
    assert any("2 kids" in c for c in active), active
    assert not any("3 kids" in c for c in active), active


def test_a_count_corrected_on_a_later_night_keeps_the_old_one_in_history(
        client: Client) -> None:
    client.record("u1", "c1", "user", "I have three cats", at=T0)
    extract.run(client, now=NIGHT1)
    client.record("u1", "c1", "user", "oops, actually it's four cats, forgot Mochi",
                  at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    active = [m.content for m in client.memories("u1", "c1", [Status.active.value])]
    archived = [m.content for m in client.memories("u1", "c1", [Status.archived.value])]
    assert any("four cats" in c for c in active), active
    assert not any("three" in c for c in active), active
    assert any("three cats" in c for c in archived), archived


def test_a_name_corrected_in_the_same_batch_is_never_active(client: Client) -> None:
    client.record("u1", "c1", "user", "my partner Jon works as a sous chef in Leith", at=T0)
    client.record("u1", "c1", "assistant", "Nice, how long has Jon been cooking?",
                  at=T0 + timedelta(minutes=1))
    client.record("u1", "c1", "user", "Jonah not Jon, he hates the short version",
                  at=T0 + timedelta(minutes=2))
    extract.run(client, now=NIGHT1)
    active = [m.content for m in client.memories("u1", "c1", [Status.active.value])]
    assert any("Jonah" in c and "chef" in c for c in active), active
    assert not any("Jon " in c or c.endswith("Jon") for c in active), active
    # The message that corrects is no memory of its own.
    assert not any("hates the short version" in c for c in active), active


def test_a_value_corrected_in_the_same_batch_is_never_written(client: Client) -> None:
    said = ["my youngest Mia starts reception in September, she's so excited",
            "sorry, autocorrect! she's called Nia not Mia. N-I-A, it's Welsh"]
    for n, text in enumerate(said):
        client.record("u1", "c1", "user", text, at=T0 + timedelta(minutes=n))
    extract.run(client, now=NIGHT1)
    every = [m.content for m in client.memories("u1", "c1")]
    assert any("Nia" in c and "reception" in c for c in every), every
    assert not any("Mia" in c for c in every), every
    # The same night read again finds the memory it made, and only reinforces it.
    for n, text in enumerate(said):
        client.record("u1", "c1", "user", text, at=T0 + timedelta(minutes=n, seconds=30))
    extract.run(client, now=NIGHT2)
    assert [m.content for m in client.memories("u1", "c1")] == every


def test_a_correction_read_again_over_its_result_adds_nothing() -> None:
    # A night replayed (or a message extracted twice): the memory already says the new
    # value, so the correcting message is still no memory of its own.
    from dataclasses import replace

    from engrammar.extract.parser._decisions import shipped
    from engrammar.extract.parser._extractor import ParserExtractor
    from engrammar.models import Memory, Message, Role, Scope, Surface

    dog = Memory(id=3, user_id="u", chat_id="c", type=MemoryType.profile,
                 content="Has a dog named Biscuit", status=Status.active, confidence=0.9,
                 salience=0.8, surface=Surface.speak, created_at=T0, updated_at=T0)
    said = Message(id=1, user_id="u", chat_id="c", role=Role.user, at=T0,
                   content="no no, the dog is Biscuit not Pickle, Pickle was my old cat")
    # A model that keeps every turn: the message's words would be kept if it were no
    # correction.
    eager = ParserExtractor(replace(shipped(), turn_threshold=0.0))
    ops = eager.extract(Scope(user_id="u", chat_id="c"), [said], [dog], T0).ops
    assert not any("Biscuit" in op.content for op in ops if op.op.value == "add"), ops


def test_a_thing_taken_back_is_corrected_in_states_only() -> None:
    (thing,) = found("I told you wrong the other day. it's trams I drive, not buses.")
    assert (thing.new, thing.old) == ("trams", "buses")
    assert thing.apply("Drives buses for Stagecoach", MemoryType.profile) == \
        "Drives trams for Stagecoach"
    assert thing.apply("Took two buses to Leeds", MemoryType.episodic) is None
    # Without taking anything back, a thing set against another is a choice, not a fix.
    assert found("I want pasta, not pizza") == []


def test_a_forget_takes_the_name_the_next_sentence_gives(client: Client) -> None:
    client.record("u1", "c1", "user", "I was a recruiter at Hays for six years, left in "
                  "June. not missing it one bit", at=T0)
    extract.run(client, now=NIGHT1)
    assert any("Hays" in m.content for m in client.memories("u1", "c1"))
    client.record("u1", "c1", "user", "can you wipe the thing about my old job? the Hays "
                  "stuff. just don't want it kept", at=T0 + timedelta(days=1))
    extract.run(client, now=NIGHT2)
    active = [m.content for m in client.memories("u1", "c1", [Status.active.value])]
    assert not any("Hays" in c for c in active), active


def test_a_batch_read_again_does_not_set_a_value_back(client: Client) -> None:
    said = ["I live in Leeds with my partner", "big news, we moved to York last week"]
    for n, text in enumerate(said):
        client.record("u1", "c1", "user", text, at=T0 + timedelta(minutes=n))
    extract.run(client, now=NIGHT1)
    first = {(m.id, m.status, m.content) for m in client.memories("u1", "c1")}
    # Leeds was written, then updated: the old home is kept, no longer live.
    live = [c for _, status, c in first if status is Status.active]
    assert any("York" in c for c in live) and not any("Leeds" in c for c in live), first
    assert any("Leeds" in c and s is not Status.active for _, s, c in first), first
    events = len(client.history("u1", "c1"))
    # The same messages recorded again (a client that retried): York is not set back to
    # Leeds and forward again; nothing changes but the memory standing.
    for n, text in enumerate(said):
        client.record("u1", "c1", "user", text, at=T0 + timedelta(minutes=n, seconds=30))
    extract.run(client, now=NIGHT2)
    assert {(m.id, m.status, m.content) for m in client.memories("u1", "c1")} == first
    again = client.history("u1", "c1")[events:]
    assert {e.op for e in again} <= {"reject", "reinforce"}, [(e.op, e.reason) for e in again]


def test_a_thing_you_got_wrong_takes_the_value_said_after_it(client: Client) -> None:
    # the wrong value is never said again: the gate finds the memory about the thing
    live = told(client, "My wedding anniversary is on 3 June.", "you have my wedding "
                "anniversary wrong, it's the 9th of june. can you remind me the week before?")
    assert any("9th of june" in c for c in live), live
    assert not any("3 June" in c for c in live), live


def test_someone_you_got_wrong_takes_what_is_said_of_them_after_it(client: Client) -> None:
    # the one got wrong is named, and a "he" says what is right of him
    live = told(client, "User's nephew Emeka is 4 years old.", "hold on, you've got Emeka "
                "wrong, he turned 6 in august. what's a good lego set for him?")
    assert any("Emeka" in c and "6" in c for c in live), live
    assert not any("4 years" in c for c in live), live
    # nor is "got my cousin wrong" read as having a cousin "wrong"
    from engrammar.extract.parser._corrections import put_right

    (doc,) = parse(["you've got my cousin wrong, she's a midwife now"])
    assert [op.content for op, _ in put_right(doc)] == ["Their cousin is a midwife now"]


def test_a_value_put_right_beside_the_wrong_one_is_a_correction_only() -> None:
    from engrammar.extract.parser._corrections import put_right

    (doc,) = parse(["you have my surname wrong, it's Okafor not Okafur"])
    assert put_right(doc) == []
    (doc,) = parse(["the film was wrong about it, it's a myth"])
    assert put_right(doc) == []


def test_a_job_started_somewhere_takes_the_place_of_the_old_one(client: Client) -> None:
    live = told(client, "I'm a barista at a cafe on the quay.",
                "big news, started at Aldi as an assistant manager on monday")
    assert any("assistant manager at Aldi" in c for c in live), live
    assert not any("barista" in c for c in live), live
    # a trade no list names, by the occupation model, as for "I'm a ...": not what
    # something started as (no job of "a joke"), nor a part in a choir
    from tests.test_offline import said

    assert any(c.startswith("Works as a hospital porter") for _, _, c in said(
        "started with the NHS trust last week as a hospital porter"))
    for text in ("started as a joke really", "I joined the choir as an alto"):
        assert not any(c.startswith("Works") for _, _, c in said(text)), text
