"""The offline extractor's recall-first candidates and its learned decisions (issue 21)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from engrammar.extract.parser._candidates import candidates, clause_candidates
from engrammar.extract.parser._clauses import analyse
from engrammar.extract.parser._decisions import propose, propose_turn, shipped
from engrammar.extract.parser._extractor import ParserExtractor
from engrammar.extract.parser._nlp import parse
from engrammar.extract.parser._turns import TurnCandidate
from engrammar.models import MemoryType, Message, OpKind, Role, Scope
from tests.test_offline import said

AT = datetime(2026, 3, 4, 12, tzinfo=UTC)


def contents(text: str) -> list[str]:
    (doc,) = parse([text])
    return [c.content for c in candidates(analyse(doc))]


def test_a_sentence_about_the_speaker_is_a_candidate_in_their_words() -> None:
    assert contents("I don't eat meat and my sister moved to Leeds in 2019.") == [
        "Does not eat meat and their sister moved to Leeds in 2019"]
    assert contents("Yeah, I've been painting lately.") == ["Has been painting lately"]


def test_questions_wishes_and_quotes_are_no_candidates() -> None:
    assert contents("Do you think I should move to Lisbon?") == []
    assert contents("If I had a boat I would sail to Crete.") == []
    assert contents("You are so kind to me.") == []


def test_a_question_without_its_mark_is_no_turn() -> None:
    # Chat leaves the "?" off: a wh-word straight before its verb still asks.
    assert turns_of(("user", "right next one, whats the tallest mountain in wales")) == [None]
    assert turns_of(("user", "how many legs has a lobster got")) == [None]
    (turn,) = turns_of(("user", "what I really want is a quiet night in with my cat"))
    assert turn is not None


def test_a_coordinated_clause_is_a_candidate_of_its_own() -> None:
    (doc,) = parse(["I hate olives and I'm learning the oboe."])
    assert [c.content for c in clause_candidates(analyse(doc))] == [
        "Hates olives", "Is learning the oboe"]


def test_a_long_sentence_is_cut_between_words() -> None:
    text = "I told them " + ", ".join(f"item number {n} of my collection" for n in range(30))
    (content,) = contents(text)
    assert len(content) <= 240
    assert text.replace("I told them", "Told them").replace(" my ", " their ").startswith(content)
    assert content.endswith("collection")


def test_the_model_keeps_a_dated_event_as_an_episodic_memory() -> None:
    (doc,) = parse(["I went to a support group for trans people yesterday and it was "
                    "so powerful."])
    (cand,) = candidates(analyse(doc))
    (op,) = propose(cand, AT)
    assert op.op is OpKind.add and op.type is MemoryType.episodic
    assert op.content.startswith("Went to a support group for trans people yesterday")
    assert "2026-03-03" in op.content


def test_small_talk_is_not_kept() -> None:
    (doc,) = parse(["I totally agree with you on that."])
    assert [op for c in candidates(analyse(doc)) for op in propose(c, AT)] == []


# -- turn candidates: what a message states that no reading kept ----------------------------

def chat(*turns: tuple[str, str]) -> list[Message]:
    return [Message(id=n + 1, user_id="u", chat_id="c", role=Role(role), content=text,
                    at=AT + timedelta(minutes=n)) for n, (role, text) in enumerate(turns)]


def turns_of(*turns: tuple[str, str]) -> list[TurnCandidate | None]:
    return ParserExtractor().read(chat(*turns)).turns


def test_a_short_answer_keeps_the_question_it_answers() -> None:
    (turn,) = turns_of(("assistant", "Nice to meet you! And your brother, where is he now?"),
                       ("user", "glasgow"))
    assert turn is not None and turn.answer
    assert turn.content == 'Glasgow. (asked "And their brother, where is he now?")'
    # a question put to "you" is said back instead: the answer completes its sentence
    assert answered("Nice to meet you! Where are you based?", "glasgow") == [
        ("add", "profile", "Lives in glasgow")]



def answered(question: str, answer: str) -> list[tuple[str, str | None, str]]:
    messages = chat(("assistant", question), ("user", answer))
    return [(op.op.value, op.type.value if op.type else None, op.content) for op in
            ParserExtractor().extract(Scope(user_id="u", chat_id="c"), messages, [], AT).ops]


def test_a_short_answer_the_turn_model_drops_is_kept_beside_its_question() -> None:
    # The turn model reads these few words alone, under its bar; the answer model
    # (parser._answers) reads them with the question and keeps them.
    assert answered("Anything you can't eat?", "sesame. allergic") == [
        ("add", "profile", 'Sesame. Allergic. (asked "Anything they can\'t eat?")')]
    # an offer taken up, or an answer that says nothing lasting, is still no memory
    assert answered("Want me to add a shopping list?", "sure") == []
    assert answered("Which time works better for you?", "either is fine") == []

def test_a_longer_answer_stands_alone_in_the_speakers_words() -> None:
    (turn,) = turns_of(("assistant", "Any pets?"),
                       ("user", "yeah, a beagle called Rolo. total menace, chews every "
                                "shoe in the house"))
    assert turn is not None
    assert turn.content == ("A beagle called Rolo. Total menace, chews every shoe in the "
                            "house")


def test_a_he_after_a_named_pet_is_the_pet() -> None:
    # (the age is the beagle's, by name: the turn keeps the rest of the answer)
    assert ("add", "profile", "Their beagle Rolo is 4 years old") in said(
        "yeah, a beagle called Rolo. he's 4 and a total menace")


def test_a_she_a_message_later_is_named_in_the_memory() -> None:
    # Read alone, "She's really into ..." says nothing of whose it is, and a query for the
    # sister could not find it.
    _, turn = turns_of(("user", "my sister's wedding is in June"),
                       ("user", "she's really into vintage cars"))
    assert turn is not None and turn.content == "Their sister is really into vintage cars"
    # by name too, when the earlier message gave one
    _, turn = turns_of(("user", "my old flatmate Priya is visiting in June"),
                       ("user", "she's really into bouldering, any gift ideas"))
    assert turn is not None and turn.content.startswith("Their flatmate Priya is really into")
    # Named in the same message, the pronoun stays as said: the memory carries the name.
    (turn,) = turns_of(("user", "Karim, my brother, is a chef. he loves it"))
    assert turn is not None and "Their brother loves" not in turn.content


def test_what_is_said_to_the_assistant_or_asked_is_no_turn() -> None:
    assert turns_of(("user", "guess what I do for work")) == [None]
    assert turns_of(("user", "do you know any good bakeries near Leith?")) == [None]
    assert turns_of(("user", "maybe I'll take up rowing one day")) == [None]


def test_a_message_that_acts_on_the_memory_has_no_turn() -> None:
    # the request refers to what was just said: neither message is a fact to keep
    found = turns_of(("user", "I've had a really rough year with relationships."),
                     ("user", "Please never mention my ex."))
    assert found == [None, None]
    # one about something else stays a fact: the boundary names what it keeps out
    shifts, _ = turns_of(("user", "can you sort me a week of dinners? i do long shifts as a "
                                  "hospital porter so it has to be quick to reheat"),
                         ("user", "also please don't bring up my mum, she's unwell"))
    assert shifts is not None and "hospital porter" in shifts.content


def test_the_turn_model_decides_and_types_what_it_keeps() -> None:
    model = shipped()
    # (with a colon it is a list: _fragments.listed's, a loop per item)
    (turn,) = turns_of(("user", "Three things this week. Dentist on weds, pay the council "
                                "tax, and my mum's 70th on saturday."))
    assert turn is not None
    (op,) = propose_turn(turn, AT, model)
    assert op.op is OpKind.add and op.content.startswith(turn.content)
    assert "council tax" in op.content and "70th" in op.content
    (small_talk,) = turns_of(("user", "haha yeah totally, same here"))
    assert small_talk is None or model.keep_turn(small_talk) < model.turn_threshold


# -- one memory per message: the turn stands for the plain ops on its sentences ------------

def extracted(text: str) -> list[tuple[OpKind, MemoryType | None, str]]:
    ops = ParserExtractor().extract(Scope(user_id="u", chat_id="c"),
                                    chat(("user", text)), [], AT).ops
    return [(op.op, op.type, op.content) for op in ops]


def test_a_kept_turn_stands_for_the_resolution_on_its_sentences() -> None:
    text = ("I finally rang my mother last night. She's doing fine and we talked for an hour "
            "about her garden.")
    (turn,) = turns_of(("user", text))
    assert turn is not None and [op.op for op in turn.replaces] == [OpKind.close_loop]
    ((kind, _, content),) = extracted(text)  # one memory, not the clause beside the whole
    # several sentences are more than a resolution: a report the gate may close a plan with
    assert kind is OpKind.add
    assert content.startswith("Finally rang their mother last night. She is doing fine")
    assert "garden" in content


def test_a_one_sentence_resolution_stays_a_resolution_in_the_turns_words() -> None:
    ((kind, _, content),) = extracted("I finally rang my mother last night, she's doing fine.")
    assert kind is OpKind.close_loop
    assert content.startswith("Finally rang their mother last night, she is doing fine")


def test_a_reading_in_words_of_its_own_keeps_its_sentence() -> None:
    # "Likes coffee" is what the gate compares a later "I don't like coffee anymore" with
    assert turns_of(("user", "I love coffee, I drink it all day.")) == [None]
    assert extracted("I love coffee, I drink it all day.") == [
        (OpKind.add, MemoryType.preference, "Likes coffee")]


# -- what a turn leaves out, and an answer that details the fact it follows up -------------

def test_a_noncommittal_answer_states_nothing() -> None:
    for answer in ("not sure tbh", "idk really", "we'll see", "I don't know yet"):
        assert turns_of(("assistant", "When are you moving?"), ("user", answer)) == [None]
    # ... and leaves the rest of the message its turn
    (turn,) = turns_of(("assistant", "When are you moving?"),
                       ("user", "no idea. the landlord keeps changing the dates on us"))
    assert turn is not None and turn.content.startswith("The landlord keeps changing")


def test_someone_elses_quoted_words_are_not_the_users_fact() -> None:
    assert turns_of(("user", 'my neighbour was like "we are selling up and moving to Spain" '
                             "over the fence today")) == [None]
    # a title or a saying in quotes is no one's speech: the user's sentence stays
    (turn,) = turns_of(("user", 'finished reading "The Overstory" on the train, loved it'))
    assert turn is not None and "Overstory" in turn.content


def test_a_volunteered_phrase_with_no_predicate_name_or_figure_is_no_turn() -> None:
    assert turns_of(("user", "evening! long day at the warehouse 😴")) == [None]
    (turn,) = turns_of(("user", "council tax £1,800 a year for a flat in Hull. madness"))
    assert turn is not None and "1,800" in turn.content


def test_an_answer_to_a_follow_up_question_joins_the_fact_it_details() -> None:
    # every turn kept, so the join is what is tested, not the model's score of the answer
    model = dataclasses.replace(shipped(), turn_threshold=0.0)
    messages = chat(("user", "I work as a nurse at the children's hospital."),
                    ("assistant", "That must be intense. Which ward?"),
                    ("user", "the oncology ward, mostly night shifts"))
    (answer,) = ParserExtractor().read(messages)[2][1:]
    assert answer is not None and not answer.own
    ops = ParserExtractor(model).extract(Scope(user_id="u", chat_id="c"), messages, [], AT).ops
    joined = [op for op in ops if "oncology" in op.content]
    assert len(joined) == 1 and joined[0].content.startswith("Works as a nurse")
    assert joined[0].evidence == [1, 3]
    # a reply that says a thing of its own rather than lean on the question stays its own
    other = chat(("user", "I work as a nurse at the children's hospital."),
                 ("assistant", "That must be intense. Which ward?"),
                 ("user", "The car broke down again this morning."))
    ops = ParserExtractor(model).extract(Scope(user_id="u", chat_id="c"), other, [], AT).ops
    assert all(op.evidence != [1, 3] for op in ops)
    # an answer to the other speaker, or one with a clause of the user's own, stays its own
    alone = chat(("user", "I work as a nurse at the children's hospital."),
                 ("user", "Which ward?"), ("user", "the oncology ward, mostly night shifts"))
    ops = ParserExtractor(model).extract(Scope(user_id="u", chat_id="c"), alone, [], AT).ops
    assert all(op.evidence != [1, 3] for op in ops)


def test_an_answer_in_a_run_of_questions_stands_alone() -> None:
    # When the message before the question answered one itself, the next question asks
    # about something new unless its words take that answer up: each answer is its own
    # memory, not a detail of the one before.
    model = dataclasses.replace(shipped(), turn_threshold=0.0)
    messages = chat(("assistant", "Do you eat tofu? A lot of quick ones use it."),
                    ("user", "god no"),
                    ("assistant", "Noted. Is chicken OK?"),
                    ("user", "yep chicken's my go-to"))
    ops = ParserExtractor(model).extract(Scope(user_id="u", chat_id="c"), messages, [], AT).ops
    assert [op.evidence for op in ops if "chicken" in op.content] == [[4]]
    assert not any("chicken" in op.content and "tofu" in op.content for op in ops)
    # a question that takes up what the answer said still asks about it
    taken_up = chat(("assistant", "What do you do for work?"),
                    ("user", "I work in a call centre."),
                    ("assistant", "What kind of calls?"),
                    ("user", "insurance claims mostly, night shifts"))
    ops = ParserExtractor(model).extract(Scope(user_id="u", chat_id="c"), taken_up, [],
                                         AT).ops
    assert [op.evidence for op in ops if "insurance" in op.content.lower()] == [[2, 4]]


def test_a_verb_said_without_its_i_agrees_in_the_turn() -> None:
    (turn,) = turns_of(("user", "want to learn the cello this year"))
    assert turn is not None and turn.content == "Wants to learn the cello this year"
    # a past form the tagger takes for the base form stays as said
    (turn,) = turns_of(("user", "Lost my dad in March."))
    assert turn is not None and turn.content == "Lost their dad in March"


def test_a_thing_about_to_be_done_in_the_chat_is_no_plan() -> None:
    # The statement model (parser._statements.passing_plan) reads the plan as typed: what
    # the user is about to do in the chat is nothing to follow up.
    assert said("ok I'll paste my draft below") == []
    assert said("hang on, I'll type the rest out") == []
    # a plan of their life stays one, with a day named or none
    assert said("we're planning to redo the kitchen") == [
        ("add", "open_loop", "Plans to redo the kitchen")]
    assert said("I'm going to start learning Spanish") == [
        ("add", "open_loop", "Plans to start learning Spanish")]


def test_a_list_typed_one_item_a_line_is_a_fact_an_item() -> None:
    # Each line a list's marker opens is a sentence of its own, and so is the line after
    # the list; the line that opens the list states nothing of its own.
    found = said("Some background before my question:\n- 33, from Porto\n"
                 "- work as a pharmacist at a clinic\n- I don't eat pork\n"
                 "- two sons, Tiago and Rui\nwhat should I cook for Sunday?")
    contents = [content for _, _, content in found]
    assert "Works as a pharmacist at a clinic" in contents
    assert "Has two sons, Tiago and Rui" in contents
    # a plain line the turn model reads low, kept by the statement model as a list's item
    assert ("add", "preference", "Does not eat pork") in found
    assert not any("background" in content or "cook" in content for content in contents)


def test_a_plain_line_alone_is_left_to_the_turn_model() -> None:
    # the statement model keeps a list's items only: the same words as a message of their
    # own stay the turn model's to keep (it drops them, as it was measured)
    assert said("I don't take sugar.") == []
    # (the lines no reading kept are one memory, as any message's leftover sentences)
    assert said("quick things about me:\n- I don't take sugar\n- I work nights") == [
        ("add", "preference", "Does not take sugar. Works nights")]


def test_a_fragment_after_an_answer_goes_on_answering() -> None:
    # "nurse. nights mostly": the second sentence says more of the job the first gave
    messages = chat(("assistant", "And what do you do for work?"),
                    ("user", "nurse. nights mostly"))
    ops = ParserExtractor().extract(Scope(user_id="u", chat_id="c"), messages, [], AT).ops
    assert [op.content.split(".")[:2] for op in ops] == [["Works as a nurse", " Nights mostly"]]


def test_a_bare_yes_or_no_says_back_the_question_put_to_you() -> None:
    def read(question: str, answer: str) -> list[str]:
        messages = chat(("assistant", question), ("user", answer))
        return [op.content for op in ParserExtractor().extract(
            Scope(user_id="u", chat_id="c"), messages, [], AT).ops]

    assert read("Sure! Do you eat tofu? A lot of quick ones use it.", "god no") == [
        "Does not eat tofu"]
    assert read("Are you vegetarian?", "yes!") == ["Is vegetarian"]
    assert read("Do you have any pets?", "nope 😬") == ["Does not have any pets"]
    # an offer taken up, or what one knows, says no fact of the one asked
    assert read("Would you like the recipe in metric?", "yes please") == []
    assert read("Do you want me to make it shorter?", "yes") == []
    # an answer that says more than yes or no is read as it is
    assert not any(c.startswith("Eats") for c in read("Do you eat tofu?",
                                                      "yep chicken's my go-to"))


def test_a_few_words_fill_in_what_the_question_put_to_you_asks() -> None:
    from engrammar.extract.parser._restatements import restated

    assert restated([
        ("Got it. Any foods you avoid?", "pork"),
        ("Hi! To tailor things a bit, where are you based?", "lyon"),
        ("What kind of music do you listen to?", "shoegaze mostly"),
        ("What's your partner's name?", "Dana"),
        ("How many kids do you have?", "two"),
        ("What time do you usually get up?", "5:40"),
    ]) == ["I avoid pork.", "I am based in lyon.", "I listen to shoegaze mostly.",
           "My partner's name is Dana.", "I have two kids.", "I usually get up at 5:40."]
    # how it went, a job (which the fragment reading knows), a question of someone else's,
    # and an answer with a sentence of its own are left as they are
    assert restated([
        ("How was your first day?", "long but good"),
        ("What do you do for work?", "nurse"),
        ("How old are they?", "6 and 11"),
        ("Where do you live?", "it's in leeds"),
        ("What's the weather like?", "grim"),
        (None, "pork"),
    ]) == [None] * 6
    # read so, the answer is a fact the readings know, with its slot
    messages = chat(("assistant", "Hi! To tailor things a bit, where are you based?"),
                    ("user", "lyon"))
    (op,) = ParserExtractor().extract(Scope(user_id="u", chat_id="c"), messages, [], AT).ops
    assert op.content == "Lives in lyon" and op.slot == "home"


def test_an_answer_said_back_only_when_it_names_what_was_asked() -> None:
    # (each from a read-back review: a filler, a refusal, a place with its preposition, a
    # reply to a bid or a check-in, a count with no number, a question naming the asker
    # or what the talk named before, a verb with a second object)
    from engrammar.extract.parser._restatements import restated

    pairs = [("Where do you live?", "in leeds"), ("Where do you live?", "idk"),
             ("Where do you live?", "rather not say"), ("What's your name?", "lol"),
             ("How long have you been together?", "since uni"),
             ("Where are you headed?", "Rome"),
             ("Can you paste the full traceback?", "sure"), ("Are you ready?", "yes"),
             ("How old are you?", "34 next week"), ("How many kids do you have?", "two boys"),
             ("Do you have kids?", "yes 3"),
             ("Have you tried the stretches I suggested?", "no"),
             ("what do you call her?", "Miso"), ("What do you call your dog?", "biscuit"),
             ("Any topics you'd like me to avoid?", "politics"),
             ("Do you prefer tea or coffee?", "yes"),
             ("How long have you lived there?", "5 years")]
    assert restated(pairs) == [None] * len(pairs)
    # a smiley says nothing, and a possessive keeps its mark
    assert restated([("Do you eat fish?", "yes :)"), ("How old are you?", "34 :)"),
                     ("What are your kids' names?", "Dana and Leo")]) == [
        "I eat fish.", "I am 34 years old.", "My kids' names are Dana and Leo."]


def test_only_the_assistants_question_is_said_back() -> None:
    messages = chat(("user", "Do you have feelings?"), ("user", "no"))
    ops = ParserExtractor().extract(Scope(user_id="u", chat_id="c"), messages, [], AT).ops
    assert not any("feelings" in op.content for op in ops)
