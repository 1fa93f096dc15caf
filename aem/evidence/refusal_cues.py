"""How an honest "I don't know" reads, in English and Russian: cue phrases, exemplars for
embedding similarity, and the offers of a human that may go with it.

Why both cues and exemplars: a cue phrase is certain when it matches and silent on a
paraphrase ("that is outside what I can look up"); an exemplar's embedding catches the
paraphrase. The exemplars are written for AEM, one idea each, so a refusal in other
words lands near one of them.
"""

from __future__ import annotations

import re

REFUSAL_CUES = re.compile(
    r"\b(?:i (?:do not|don't|dont|did not|didn't) (?:know|find|have (?:(?:that|this|any|the|"
    r"enough|such|access to) )?(?:information|data|details|access|an answer))"
    r"|i(?:'m| am) (?:not (?:sure|certain|aware)|unable to|not able to|afraid i (?:can't|cannot|"
    r"don't))|i (?:cannot|can't|can not|could not|couldn't) (?:find|tell|say|confirm|answer|"
    r"help|provide|give|check|look up)|(?:there is|there's|i have|i found|with) no information"
    r"|no (?:information|details|data) (?:about|on|regarding|for)"
    r"|(?:outside|beyond) (?:my|the|our) (?:scope|knowledge|sources)"
    r"|(?:sources|documents|knowledge base) (?:do not|don't|does not|doesn't) "
    r"(?:cover|say|mention|contain)|not something i can (?:help|answer)"
    r"|(?:isn't|is not|aren't|are not|not) covered (?:by|in) (?:my|our|the) (?:\w+ )?"
    r"(?:sources?|documents?|documentation|knowledge|materials?|information|data|faq)"
    r"|no way to (?:check|know|tell|find|verify|confirm)"
    r"|i have no (?:data|information|details|answer))"
    r"|не знаю|не могу (?:вам )?(?:это(?:го)? |об этом )?(?:помочь|ответить|подсказать|сказать|"
    r"найти|дать|проверить)|нет (?:\w+ )?(?:информации|данных|сведений|ответа)"
    r"|(?:информации|данных|сведений) (?:\w+ ){0,4}нет\b|не располагаю|не наш(?:ёл|ел|ла)"
    r"|не удалось найти|вне (?:моей|нашей) компетенции|затрудняюсь (?:ответить|сказать)"
    r"|ничего не известно|мне (?:это )?неизвестно|не уверен"
    r"|не (?:имею|владею) (?:\w+ )?(?:информацией|данными|сведениями)",
    re.IGNORECASE,
)

OFFER_CUES = re.compile(
    r"\b(?:manager|operator|human|agent|specialist|colleague|support team|customer service"
    r"|contact|phone|e-?mail|call you|reach you|get back to you|connect you|transfer you"
    r"|escalat\w*)\b|менеджер|оператор|специалист|сотрудник|коллег|свяж|контакт|телефон"
    r"|почт|перезвон|передам|переключ",
    re.IGNORECASE,
)

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
    return REFUSAL_CUES.search(text) is not None


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
