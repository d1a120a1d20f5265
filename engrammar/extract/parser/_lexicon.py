"""Word classes the offline extractor reads predicates by: lemmas, not phrases.

A clause's meaning comes from its parse (extract.parser._clauses); these sets only say which lemma
means what: "relocate" is a move, "adore" a liking, "sorted" a finished state. They hold
lemmas, so every inflection and word order of a verb is covered by one entry.
"""

from __future__ import annotations

LIKE = frozenset({"love", "like", "enjoy", "adore", "prefer", "dig", "fancy", "appreciate",
                  "relish", "cherish"})
DISLIKE = frozenset({"hate", "dislike", "detest", "loathe", "despise", "abhor"})
# "I live in X", "we settled in X"; "I moved to X", "we relocated to X".
HOME_IN = frozenset({"live", "reside", "settle", "stay", "base"})
HOME_TO = frozenset({"move", "relocate", "emigrate"})
# Not "ignore": "ignore previous instructions" is an injection, not a request to forget.
# The imperative with one of these and a topic is a forget where the request model says
# none (parser._requests.request): the model misses some chat wordings of it.
FORGET = frozenset({"forget", "erase", "delete", "drop", "scrap", "scratch", "wipe",
                    "unlearn"})
# Verbs of what one does regularly: "I cycle to work", "I run every morning".
HABITS = frozenset({"cycle", "bike", "walk", "run", "swim", "commute", "drive", "climb",
                    "hike", "train", "volunteer", "knit", "paint", "cook", "bake", "dance",
                    "sing", "surf", "ski", "skate", "row", "box", "meditate", "garden"})
# Verbs the small tagger misreads at the start of a sentence ("Scratch that" as a noun): the
# parse is mended to an imperative with them (parser._owners.owner_of). Whether such a
# sentence is a request, and which, the request model says (parser._intent).
REQUEST_VERBS = FORGET | frozenset({"mention", "bring", "raise", "discuss", "talk", "ask",
                                    "remind", "reference", "remember", "keep", "call",
                                    "stop", "mind"})
MOODS = frozenset({"tired", "sad", "stressed", "exhausted", "angry", "bored", "sick",
                   "grumpy", "down", "anxious", "upset", "nervous", "lonely", "overwhelmed",
                   "frustrated", "happy", "excited", "worried", "sleepy", "drained", "burnt",
                   "cranky", "hungover", "annoyed", "miserable", "depressed"})
DIET = frozenset({"vegetarian", "vegan", "pescatarian", "pescetarian", "keto", "kosher",
                  "halal", "gluten-free", "lactose-intolerant", "paleo", "teetotal",
                  "sober", "celiac", "coeliac", "veggie", "veg", "plant-based"})
PETS = frozenset({"dog", "cat", "puppy", "kitten", "parrot", "rabbit", "bunny", "hamster",
                  "pup", "doggo", "kitty", "fish", "turtle", "tortoise", "snake", "lizard",
                  "horse", "pony", "ferret", "guinea", "budgie", "gecko", "bird", "retriever",
                  "labrador", "lab", "poodle", "terrier", "beagle", "husky", "corgi", "pug",
                  "tabby", "shepherd", "spaniel", "dachshund", "chihuahua", "collie"})
# Things one "has" that are appointments: "I have a dentist appointment on Friday".
EVENTS = frozenset({"appointment", "interview", "meeting", "exam", "test", "surgery",
                    "deadline", "flight", "date", "checkup", "check-up", "hearing",
                    "presentation", "recital", "game", "match", "audition", "shift",
                    "session", "consultation", "class", "party", "wedding", "trip", "appt",
                    "physio", "therapy", "dentist", "doctor", "vet", "call", "reunion", "play",
                    "concert", "show", "gig", "tournament", "race", "mot", "scan"})
CLOSED_STATES = frozenset({"done", "sorted", "finished", "handled", "over", "submitted",
                           "fixed", "complete", "completed", "resolved", "renewed", "paid",
                           "booked", "sent"})
# Verbs of being, having, thinking and feeling: in the past they report no action, so
# they resolve no open loop and make no event of their own.
STATIVE = frozenset({"be", "have", "like", "love", "feel", "think", "know", "want", "say",
                     "tell", "seem", "mean", "guess", "suppose", "hope", "wish", "need",
                     "live", "work", "hate", "enjoy", "believe", "forget", "remember",
                     "thank", "let", "talk", "ask", "use",
                     "wonder", "look", "sound", "realize", "realise", "understand"})
NOT_JOBS = frozenset({"bit", "lot", "fan", "mess", "person", "fool", "mother", "father",
                      "parent", "member", "believer", "user", "beginner", "customer",
                      "lover", "reader", "speaker", "sucker", "winner", "loser", "owner",
                      "morning", "night", "type", "kind", "sort", "part", "number",
                      "sister", "brother", "daughter", "son", "wife", "husband", "runner"})
JOBS = frozenset({"nurse", "doctor", "physician", "surgeon", "dentist", "pharmacist",
                  "teacher", "professor", "lecturer", "student", "researcher", "lawyer",
                  "accountant", "translator", "journalist", "writer", "editor",
                  "photographer", "musician", "artist", "chef", "cook", "baker", "barista",
                  "waiter", "waitress", "electrician", "plumber", "carpenter", "mechanic",
                  "pilot", "firefighter", "officer", "paramedic", "therapist",
                  "psychologist", "consultant", "manager", "entrepreneur", "farmer",
                  "veterinarian", "vet", "librarian", "cashier", "driver", "retiree",
                  "engineer", "developer", "programmer", "designer", "architect",
                  "scientist", "analyst", "intern", "freelancer", "clerk", "midwife",
                  "attorney", "paralegal", "tutor", "coach", "nanny", "janitor", "cop",
                  "soldier", "sergeant", "detective", "receptionist", "secretary",
                  "bartender", "server", "dev", "coder", "grad", "undergrad", "postdoc",
                  "rn", "emt", "hairdresser", "barber", "tailor", "founder", "ceo", "cto",
                  "director", "executive", "salesman", "realtor", "agent", "banker",
                  "trader", "economist", "historian", "biologist", "chemist", "physicist",
                  "mathematician", "statistician", "technician", "welder", "roofer",
                  "landscaper", "gardener", "caregiver", "carer", "counselor", "counsellor",
                  "priest", "pastor", "rabbi", "imam", "actor", "actress", "dancer",
                  "singer", "painter", "sculptor", "animator", "illustrator", "copywriter",
                  "marketer", "recruiter", "auditor", "bookkeeper", "optician",
                  "radiologist", "anesthesiologist", "psychiatrist", "neurologist",
                  "physiotherapist", "physio", "housewife", "homemaker", "freshman",
                  "sophomore", "junior", "senior", "tech", "assistant",
                  "specialist", "supervisor", "foreman", "contractor", "instructor",
                  "plasterer", "bricklayer", "joiner", "decorator", "labourer", "laborer",
                  "cleaner", "builder", "postman", "courier", "radiographer", "sonographer",
                  })
JOB_ENDINGS = ("ist", "ician", "eer", "grapher", "ographer", "ologist")


# The words that make an order a polite bid: "so please correct it", "pls check my maths".
POLITENESS = frozenset({"please", "pls", "plz", "plse", "plez", "kindly"})
# The participles after which a clipped or lost "'s" is "has", not "is": "she's got a season
# ticket", chat's "its been a fortnight".
PERFECT = frozenset({"been", "got", "gotten"})

# Words that open a chat sentence and say nothing of it: "ok so", "omg", "ugh", "tbh".
OPENERS = frozenset({"ok", "okay", "so", "and", "oh", "also", "anyway", "yeah", "yes",
                     "hiya", "hi", "hey", "lol", "well", "but", "plus", "btw", "ah", "um",
                     "hmm", "ugh", "honestly", "tbh", "nope", "nah", "yep", "yup", "sorry", "ha",
                     "haha", "hahaha", "omg", "wait", "actually", "right", "oops"})


RELATIONS = frozenset({
    "wife", "husband", "partner", "spouse", "son", "daughter", "kid", "child", "sister",
    "brother", "sibling", "mom", "mum", "mother", "dad", "father", "parent", "parents",
    "girlfriend", "boyfriend", "fiance", "fiancee", "grandma", "grandmother", "grandpa",
    "grandfather", "aunt", "uncle", "cousin", "niece", "nephew", "friend", "roommate",
    "boss", "coworker", "colleague", "neighbor", "neighbour", "stepson", "stepdaughter",
    "ex", "baby", "twin", "bestie", "bf", "gf", "hubby", "mil", "fil", "mate", "pal",
    "buddy", "manager", "flatmate", "housemate", "teammate", "nan", "gran", "granny",
    "grandad",
})
# The household a speaker calls by "the": "the wife's expecting", "the kids start school
# monday". (Not "the mother" or "the parents", said of a stranger as often: "the mother was
# in tears when I delivered her baby".)
HOUSEHOLD = frozenset({"wife", "husband", "hubby", "wifey", "missus", "missis", "kids",
                       "twins"})
# Kin said without "my" in chat ("mum's diabetic", "nan's 91"): still the user's relative.
KIN = frozenset({"mom", "mum", "mother", "dad", "father", "grandma", "grandpa", "nan",
                 "gran", "granny", "hubby", "wifey", "grandad"})

# A relation made of another: "grandson", "stepmum", "godmother", "half-sister",
# "sister-in-law".
_KIN_PREFIXES = ("great-", "grand", "step", "god", "half-", "half")


def trade(word: str) -> bool:
    """Whether ``word`` (a lemma) names one of the trades ``JOBS`` lists, or one by its
    ending ("physicist", "photographer")."""
    return word in JOBS or word.endswith(JOB_ENDINGS)


def kin(word: str) -> bool:
    """Whether ``word`` names a relation: one of RELATIONS, or one made of it."""
    word = word.removesuffix("-in-law")
    if word in RELATIONS:
        return True
    for prefix in _KIN_PREFIXES:
        if word.startswith(prefix) and len(word) > len(prefix) + 2:
            return kin(word[len(prefix):])
    return False
