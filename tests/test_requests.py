"""The learned request decision (parser._intent) and what the parse reads of a request
(parser._requests.asked): a lasting style of reply kept in the user's words, a topic said
to be off limits, forget requests in new wordings, and the hard negatives that look like
requests and are not (a dismissal, a one-off edit, a reply to thanks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engrammar.errors import ConfigError
from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.extract.parser._forgetting import unsaid
from engrammar.extract.parser._intent import Intent, decide, load
from engrammar.extract.parser._nlp import parse
from engrammar.extract.parser._requests import asks_not_to_mention
from engrammar.models import Memory, MemoryType, Message, Op, OpKind, Role, Surface
from tests.test_faithful import answered
from tests.test_offline import AT, SCOPE, ops_for, said


@pytest.mark.parametrize(("text", "kept"), [
    ("answer me in Italian from now on", "Asked: answer me in Italian from now on"),
    ("bullet points only from now on pls", "Asked: bullet points only from now on"),
    # A leading phrase stays whole, never without its first word ("now on, answer ...").
    ("From now on, answer me in Portuguese please",
     "Asked: From now on, answer me in Portuguese"),
    # the bidding of a request in the form of a question goes too
    ("can u reply in Welsh from now on", "Asked: reply in Welsh from now on"),
])
def test_a_lasting_style_is_kept_in_the_users_words_to_shape_replies(text: str,
                                                                    kept: str) -> None:
    (op,) = ops_for(text)
    assert (op.type.value if op.type else None, op.content) == ("protocol", kept)
    assert op.surface is Surface.adapt


def test_a_style_of_answers_keeps_every_way_it_is_asked_for() -> None:
    (op,) = ops_for("keep your answers brief and in plain English")  # not "brief" alone
    assert (op.type, op.content) == (MemoryType.protocol,
                                     "Prefers answers brief and in plain English")


def test_a_style_request_beside_a_fact_keeps_both() -> None:
    assert said("I'm a vet btw. oh and pls stop ending every answer with a question") == [
        ("add", "profile", "Works as a vet"),
        ("add", "protocol", "Asked: stop ending every answer with a question")]


def test_the_reason_given_beside_a_style_request_stays_with_it() -> None:
    # "i read these on my phone at work" is why: kept with the request, not a fact apart
    # (nor a thing done)
    assert said("no emojis pls. n keep it short, i read these on my phone at work") == [
        ("add", "protocol", "Asked: no emojis"),
        ("add", "protocol", "Asked: keep it short (they read these on their phone at work)")]
    # a fact a reading keeps in its own right stays a memory of its own
    assert ("add", "profile", "Works as a nurse on nights") in said(
        "keep it short pls, I'm a nurse on nights and read these on my breaks")


def test_an_infinitive_beside_a_request_is_no_request_of_its_own() -> None:
    # "to follow" is what the user finds hard, not what the assistant is told to do: it
    # is the request's reason, kept with it.
    assert [s for s in said("could you keep it brief, I find long answers hard to follow on "
                            "my little screen") if s[1] == "protocol"] == [
        ("add", "protocol", "Asked: keep it brief (they find long answers hard to follow on "
                            "their little screen)")]


def test_a_label_before_a_colon_is_no_subject_of_the_request() -> None:
    # "favour" was read as the subject of "give": a statement, not an order.
    assert [s for s in said("Quick thing: always give me distances in kilometres. I never "
                            "think in miles.") if s[1] == "protocol"] == [
        ("add", "protocol", "Asked: always give me distances in kilometres")]


def test_a_style_request_in_a_clause_of_its_sentence_is_kept() -> None:
    # The request is not the sentence's root: a polite "I wonder if you would ...", an
    # imperative joined on after the first ("n" is chat for "and").
    assert said("I wonder if you would be so kind as to put your answers in bullet "
                "points from now on.") == [
        ("add", "protocol", "Asked: put your answers in bullet points from now on")]
    assert [s for s in said("no emojis pls. n keep it short, i read these at work")
            if s[1] == "protocol"] == [
        ("add", "protocol", "Asked: no emojis"),
        ("add", "protocol", "Asked: keep it short (they read these at work)")]


def test_the_reason_given_for_a_style_is_kept_as_the_users_fact() -> None:
    kept = said("Please don't use emojis. My screen reader reads every one of them out loud.")
    assert ("add", "protocol", "Asked: don't use emojis") in kept
    assert any("screen reader" in content for _, kind, content in kept if kind != "protocol")


def test_a_forget_of_all_that_is_about_what_the_sentence_said_before_it() -> None:
    # "about" left at the end of its clause: the chemo stuff is what "all that" is.
    forgets = [content for kind, _, content in said(
        "Right, the chemo stuff I mentioned earlier, can you forget all that?")
        if kind == "forget"]
    assert forgets == ["the chemo stuff"]


@pytest.mark.parametrize("opener", ["", "Hiya, "])
def test_a_forget_of_a_thing_told_about_is_about_what_it_was_told_about(opener: str) -> None:
    # "that thing" names nothing the gate could match: what it was told about does
    text = (f"{opener}that thing I told you about my credit card debt, could you forget "
            "that please? Don't want it kept, I was having a bad week.")
    assert [content for kind, _, content in said(text) if kind == "forget"] == [
        "their credit card debt"]


def test_a_topic_said_off_limits_is_a_boundary_read_off_the_parse() -> None:
    (op,) = ops_for("my sister is off limits")
    assert op.content == "Never mention their sister" and op.surface is Surface.avoid
    # a negated bidding to raise it, with a name the model has not seen
    assert said("never mention my ex Rafe again") == [
        ("add", "protocol", "Never mention their ex Rafe")]
    assert said("dont bring up my weight pls") == [
        ("add", "protocol", "Does not want their weight brought up")]
    # not a bidding: the user's own habit, and a reply to thanks; nor a task's own terms
    # (a habit of theirs: a fact, which the type model calls a preference)
    assert [t for _, t, _ in said("I never mention my ex at work")] in (
        ["profile"], ["preference"])
    assert said("don't mention it!") == []
    assert not [op for op in ops_for("rewrite this email and don't mention my name")
                if op.type is MemoryType.protocol]
    assert said("don't raise your voice at me") == []
    # a bidding with no task in it is no task: "listen", "be kind"
    assert [t for _, t, _ in said("listen, don't bring up my mum")] == ["protocol"]


def test_forget_that_is_a_forget_whatever_the_model_says() -> None:
    # the request model reads "forget that I'm X" as "remember that I'm X"
    assert said("forget that I'm vegetarian") == [("forget", None, "they are vegetarian")]
    assert said("don't forget that I'm vegetarian")[0][0] == "add"


def test_the_reason_for_keeping_something_out_is_no_fact_to_keep() -> None:
    assert said("never mention my ex Rafe again, he cheated on me") == [
        ("add", "protocol", "Never mention their ex Rafe")]
    assert said("pls dont bring up my dad, he passed in march") == [
        ("add", "protocol", "Does not want their dad brought up")]
    assert said("can you forget about Imogen? she's a liar") == [("forget", None, "Imogen")]
    # what the message says of something else stays, and of another one of the same
    assert ("add", "profile", "Lives in Leeds") in said(
        "forget my old address btw, I moved to Leeds")
    rule = Op(op=OpKind.add, type=MemoryType.protocol, surface=Surface.avoid,
              content="Never mention their brother")
    facts = [Op(op=OpKind.add, type=MemoryType.profile, content=c)
             for c in ("Their brother-in-law Sam is a chef", "Their brother is a liar")]
    assert [op.content for op in unsaid([rule, *facts])] == [
        "Never mention their brother", "Their brother-in-law Sam is a chef"]
    assert [c for _, _, c in said("forget about the gym, I joined a new gym in Headingley")
            if "Headingley" in c]


@pytest.mark.parametrize(("text", "kind", "content"), [
    ("the stuff about my old job, just forget it", "forget", "their old job"),
    ("all that Dilan and wedding stuff you have, forget it", "forget",
     "all that Dilan and wedding stuff"),
    ("my ex, don't mention him ever", "add", "Never mention their ex"),
])
def test_a_topic_set_off_before_the_bidding_is_what_it_is_about(text: str, kind: str,
                                                                 content: str) -> None:
    # The parser takes the topic said first for the verb's subject; a bidding has none.
    assert (kind, content) in [(k, c) for k, _, c in said(text)]


@pytest.mark.parametrize(("text", "content"), [
    ("ok so me and jamie are done. can you forget everything about him pls", "jamie"),
    ("My sister and I fell out. Can you forget about her", "their sister"),
    ("I broke up with my boyfriend last week. Please forget everything about him.",
     "their boyfriend"),
])
def test_a_forget_of_him_or_her_is_about_the_one_named_before(text: str, content: str) -> None:
    # (the speaker joined to them is none of it)
    assert [c for k, _, c in said(text) if k == "forget"] == [content]


def test_a_forget_of_him_with_no_one_named_forgets_nothing() -> None:
    assert [c for k, _, c in said("can you forget everything about him") if k == "forget"] == []


def test_a_time_set_off_before_forget_it_is_no_topic() -> None:
    assert [c for k, _, c in said("Last night, forget it") if k == "forget"] == []


def test_a_thing_not_taken_up_again_is_no_topic_of_a_bidding() -> None:
    # no pronoun takes the ages up: "don't ask" is a shrug, and the answer stands
    found = [(k, c) for k, _, c in said("five! ages 2 to 16, don't ask")]
    assert found and all(k == "add" and "ages 2 to 16" in c for k, c in found), found


def test_a_forget_reaches_every_memory_that_names_its_topic() -> None:
    def memory(i: int, content: str) -> Memory:
        return Memory(id=i, user_id="u", chat_id="c", type=MemoryType.profile,
                      content=content, confidence=0.9, salience=0.6, surface=Surface.speak,
                      created_at=AT, updated_at=AT)
    pool = [memory(1, "Has an ex named Imogen"), memory(2, "Imogen's brother Dev has their tent"),
            memory(3, "Lives in Leeds"), memory(4, "Their ex is a dentist"),
            memory(5, "Goes to the gym on Friday nights"),
            memory(6, "Never mention their ex Imogen"),
            memory(7, "Their son Leo's school is St Mary's"), memory(8, "Has a cat named Leo")]
    pool[5] = pool[5].model_copy(update={"type": MemoryType.protocol, "surface": Surface.avoid})

    def forgets(text: str) -> list[tuple[str | None, str]]:
        message = Message(id=9, user_id="u", chat_id="c", role=Role.user, at=AT, content=text)
        return [(op.target, op.content) for op in
                ParserExtractor().extract(SCOPE, [message], pool, AT).ops
                if op.op.value == "forget"]
    # (the boundary about her stays: forgetting her is no leave to raise her)
    assert forgets("can you forget everything about Imogen?") == [
        ("m1", "Imogen"), ("m2", "Imogen")]
    # a relative with a name: by all its words ("my son Leo" is not the cat Leo)
    assert forgets("please forget everything about my son Leo") == [("m7", "their son Leo")]
    # a name joined to a thing: everything naming the name, and what names both
    pool.append(memory(10, "Wedding to Imogen planned for June"))
    both = "all that Imogen and wedding stuff"
    assert forgets(f"{both} you have, just forget it") == [
        ("m1", both), ("m2", both), ("m10", both)]
    pool.pop()
    # a thing, or a day, is no name: left to the gate, which archives the best match only
    assert forgets("can you forget about the gym?") == [(None, "the gym")]
    assert forgets("forget about Friday") == [(None, "Friday")]
    # nor is the user's own forgetting a request
    assert forgets("pls remind me about the bins, i always forget") == []


@pytest.mark.parametrize("text", [
    "forget it, never mind", "can you make this email shorter", "don't mention it!",
    "nvm, forget I asked", "could you translate this into Spanish for me?",
    "my boss told me to keep my emails short",
    # a remark about the assistant with a clause joined on is no bidding
    "you sound like a bank letter, just saying",
    "you always write in bullet points, makes it easy to skim",
    # what the other clause is about is not what the user forgets
    "just remind me abt the bins, always forget them",
])
def test_what_only_looks_like_a_request_is_none(text: str) -> None:
    # (a reported instruction may still be an event of the user's life, never a protocol)
    assert not [op for op in ops_for(text)
                if op.op.value == "forget" or (op.type and op.type.value == "protocol")]


def test_the_model_tells_requests_from_their_look_alikes() -> None:
    # ("forget it, never mind" the model calls a forget: the parse finds nothing to forget
    # in it, so nothing is proposed; see the test above)
    texts = ["answer me in Italian from now on", "please never bring up my landlord",
             "can you make this email shorter", "what's up with you",
             "I went to the market yesterday"]
    got = [intent for intent, _ in decide(parse(texts))]
    assert got == [Intent.style, Intent.avoid, Intent.none, Intent.none, Intent.none]


def test_only_sentences_addressed_to_the_assistant_are_decided() -> None:
    # No sentence passes the gate: nothing is embedded, the answer is none.
    ((intent, gated),) = decide(parse(["I went to the market yesterday. It was busy."]))
    assert intent is Intent.none and gated == []


def test_a_boundary_the_model_finds_stays_out_of_summaries() -> None:
    assert asks_not_to_mention(["my sister is off limits", "my sister is a nurse",
                                "forget it, never mind"]) == [True, False, False]


def test_weights_that_are_not_the_measured_ones_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "requests.npz"
    bad.write_bytes(b"not the model")
    with pytest.raises(ConfigError, match="sha256"):
        load(bad)


def test_a_style_requests_reason_keeps_when_it_holds() -> None:
    from tests.test_faithful import proposed

    found = proposed("keep your answers short please, I look at them on my watch while "
                     "running")
    assert any("while running" in c for c in found), found


@pytest.mark.parametrize("text", [
    "did you forget what I told you about my brother?",
    "have you forgotten my surname already?",
    "I mentioned my allergy last week, did you forget?",
])
def test_asking_whether_the_assistant_forgot_forgets_nothing(text: str) -> None:
    assert not [s for s in said(text) if s[0] == "forget"]


def test_a_request_to_forget_in_the_form_of_a_question_still_forgets() -> None:
    assert [s for s in said("could you forget what I told you about my brother?")
            if s[0] == "forget"] == [("forget", None, "their brother")]


def test_a_boundary_after_a_label_and_its_adverb_is_still_a_bidding() -> None:
    # "one thing though," heads the sentence; the parser takes "thing" for the subject
    assert said("one thing tho, dont ever bring up my ex-husband") == [
        ("add", "protocol", "Does not want their ex-husband brought up")]


def test_a_boundary_beside_a_task_request_is_the_boundary_sentences_alone() -> None:
    # The message is a request to avoid a topic; the task in the other sentence is no topic
    ops = said("could u draft a reading list for my book club this spring. "
               "oh and one more thing, dont ever bring up my divorce")
    assert [(k, t) for k, t, _ in ops] == [("add", "protocol")]
    assert "divorce" in ops[0][2] and "book" not in ops[0][2]


def test_what_a_boundary_sets_against_its_topic_is_no_part_of_it() -> None:
    (op,) = ops_for("never bring up my salary or my mortgage, just the fun stuff")
    assert op.type is MemoryType.protocol and "salary" in op.content
    assert "fun" not in op.content


def test_a_yes_to_the_assistants_offer_is_no_style_of_its_own() -> None:
    ops = said("ye pls. and keep the answers short from now on, i read them on the bus")
    styles = [c for _, t, c in ops if t == "protocol"]
    assert len(styles) == 1 and "short" in styles[0], styles


def test_a_fact_asked_to_be_remembered_without_that_is_kept() -> None:
    assert said("ok can u remember I'm lactose intolerant") == [
        ("add", "profile", "They are lactose intolerant")]


@pytest.mark.parametrize("text", ["pls can you write me a limerick about my hamster",
                                  "can you remember if I told you my postcode?"])
def test_a_thing_made_for_the_user_or_a_question_of_memory_forgets_nothing(text: str) -> None:
    assert not [op for op in ops_for(text) if op.op is OpKind.forget]


def test_a_hyphenated_topic_said_off_limits_is_read() -> None:
    # the parse made the "-" the subject: a mark alone, which broke the reading
    assert said("my ex-girlfriend is off limits as a topic") == [
        ("add", "protocol", "Never mention their ex-girlfriend")]


@pytest.mark.parametrize(("question", "text", "lasting"), [
    # a style picked from those offered is for the piece at hand
    ("Here's a first go at the speech. Should it be funny or more heartfelt?",
     "heartfelt please", False),
    ("Do you want the recipe as a numbered list or as one paragraph?",
     "one paragraph pls", False),
    # a lasting one said in the same answer is still kept
    ("Do you want the recipe as a numbered list or as one paragraph?",
     "paragraph. and please never use emojis with me", True),
    # a lasting request in the words of the choice says more than the choice
    ("Should I write the letter in English or in Welsh?",
     "welsh please, and always reply in welsh from now on", True),
])
def test_a_style_chosen_from_the_choices_offered_is_not_a_lasting_one(
        question: str, text: str, lasting: bool) -> None:
    styles = [op for op in answered(question, text) if op.type is MemoryType.protocol]
    assert bool(styles) is lasting, styles


@pytest.mark.parametrize(("text", "lasting"), [
    # what another person does is no part of the request: this piece is asked for
    ("can you make it sound less stiff, my sister always reads these closely", False),
    ("tidy it up a bit pls, she always checks the grammar", False),
    # a lasting request with another person's doing beside it stays one
    ("always answer in spanish please, my wife reads these too", True),
])
def test_a_style_is_asked_for_in_the_requests_own_words(text: str, lasting: bool) -> None:
    styles = [op for op in ops_for(text) if op.type is MemoryType.protocol]
    assert bool(styles) is lasting, styles


@pytest.mark.parametrize("text", [
    "dont eat meat anymore, went veggie in the summer",
    "dont do energy drinks these days, they gave me palpitations",
    "never ride my bike to work now, the hill kills me",
])
def test_what_the_user_no_longer_does_is_no_boundary(text: str) -> None:
    # the "I" dropped, a statement reads like an order; its verb is no thing the assistant
    # does ("dont mention meat" would be one)
    ops = ops_for(text)
    assert not any(op.surface is Surface.avoid or op.type is MemoryType.protocol
                   for op in ops), ops


def test_an_order_not_to_mention_is_still_a_boundary() -> None:
    ops = ops_for("dont mention my ex anymore pls")
    assert any(op.surface is Surface.avoid for op in ops), ops


def test_thanks_before_a_style_of_reply_is_no_part_of_it() -> None:
    from datetime import UTC, datetime

    from engrammar.extract.parser._extractor import ParserExtractor
    from engrammar.models import Message, Role, Scope

    at = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    text = ("Many thanks. I would ask that, from now on, you give every price in euros "
            "and show the sums in full.")
    ops = ParserExtractor().extract(Scope(user_id="u", chat_id="c"), [Message(
        id=1, user_id="u", chat_id="c", role=Role.user, content=text, at=at)], [], at).ops
    styles = [op.content for op in ops if op.type is not None and op.type.value == "protocol"]
    assert styles and all("euros" in s for s in styles), styles


@pytest.mark.parametrize(("text", "thing"), [
    ("forget about me dropping out of uni", "dropping out of uni"),
    ("pls delete the stuff about me failing my driving test", "failing their driving test"),
])
def test_a_thing_done_asked_to_be_forgotten_is_the_topic(text: str, thing: str) -> None:
    # "about" takes a clause here, no noun: what was done is what to forget
    (op,) = ops_for(text)
    assert op.op is OpKind.forget and thing in op.content, op
