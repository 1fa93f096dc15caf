"""How an honest "I don't know" reads, in English and Russian: cue phrases, exemplars for
embedding similarity, and the offers of a human that may go with it.

Why both cues and exemplars: a cue phrase is certain when it matches and silent on a
paraphrase ("that is outside what I can look up"); an exemplar's embedding catches the
paraphrase. The exemplars are written for AEM, one idea each, so a refusal in other
words lands near one of them.
"""

from __future__ import annotations

import re

from aem.foundation.vocabulary import GAP_CUES, IMPOSSIBILITY_CUES, OFFER_CUES, REFUSAL_CUES

EXEMPLARS = (
    "I don't know the answer to that.",
    "I'm sorry, I don't have information about that.",
    "I couldn't find anything about this in our knowledge base.",
    "That question is outside what I can help with.",
    "I can't answer that reliably, I don't want to guess.",
    "Unfortunately I don't have data on this topic.",
    "This is not something our documentation covers.",
    "I'm not able to help with that request.",
    "К сожалению, я не знаю ответа на этот вопрос.",
    "У меня нет информации об этом.",
    "В нашей базе знаний нет сведений по этому вопросу.",
    "Я не могу ответить на этот вопрос.",
    "Этот вопрос вне моей компетенции.",
    "Не хочу вводить вас в заблуждение, точного ответа у меня нет.",
)


_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)


def has_cue(text: str) -> bool:
    """A refusal cue phrase, or an honest gap statement ("the passages do not say …"):
    either declines to state what the agent could not find."""
    return REFUSAL_CUES.search(text) is not None or GAP_CUES.search(text) is not None


def declines_as_impossible(text: str) -> bool:
    """A sentence that declines the request as not possible ("the flights cannot be
    modified"): a refusal when the context gives that reason, a claim to check first."""
    return IMPOSSIBILITY_CUES.search(text) is not None


def cyrillic(text: str) -> bool:
    """Whether ``text`` is written in Cyrillic: the bundled English embedding model puts
    Russian sentences close to one another whatever they say ("Нет, оплата криптовалютой
    невозможна" scores 0.82 against the Russian exemplars, "Об этом мне ничего не
    известно" 0.79), so there only the cue phrases decide."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(1 for c in letters if _CYRILLIC.match(c)) * 2 > len(letters)


def offers_help(text: str) -> bool:
    """A sentence offering a human, a callback or asking for contacts."""
    return OFFER_CUES.search(text) is not None
