"""Every word list AEM reads text with, once, English and Russian side by side.

Why one module at the bottom of the layers: month names, stop words, negations,
magnitudes and refusal cues were copied into the date parser, the clock, value support,
entailment, completeness, the embedded judge and the taxonomy command, and a copy that
drifts changes what one of them reads while the others stay. It imports nothing of
AEM, so :mod:`aem.compare` (the lowest reader) and everything above it can use it.

Each caller keeps the content it read before. Where copies differed they are kept as
a base list plus the caller's own words, each word written once:

* stop words — :data:`FUNCTION_WORDS_EN` is completeness's list (articles, prepositions,
  copulas); :data:`STOP_WORDS` (entailment's content stems) adds pronouns, modals and
  more to it, and the Russian ones; :data:`EXPLANATION_STOP_WORDS` (the taxonomy
  command's, of words of four letters and more) and :data:`TOOL_NAME_FILLER` (the words
  of a tool's name that name no action) are lists of their own.
* month names — :data:`MONTHS_EN` (full, lower case) and its three-letter
  :data:`MONTH_ABBREVIATIONS_EN`; :data:`MONTHS_EN_PATTERN` is the regex alternation
  the date parser reads case-insensitively and the clock capitalised
  (:func:`capitalised_alternation`: "may" alone is a verb); :data:`MONTHS_RU_GENITIVE`
  ("26 мая").
* refusal cues — :data:`REFUSAL_CUES` is the refusal metric's; the embedded judge's
  :data:`DECLINE_CUES` is a narrower list (it scores, it does not detect refusals) and
  stays as it was.
"""

from __future__ import annotations

import re

# --- calendar ----------------------------------------------------------------------------
MONTHS_EN = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
MONTH_ABBREVIATIONS_EN = tuple(month[:3] for month in MONTHS_EN)
# "Sept", "June", "July" and the abbreviations; read case-insensitively by the date
# parser, capitalised by the clock.
MONTHS_EN_PATTERN = (
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    "|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
MONTHS_RU_GENITIVE = (  # "26 мая"
    "января",
    "февраля",
    "марта",
    "апреля",
    "мая",
    "июня",
    "июля",
    "августа",
    "сентября",
    "октября",
    "ноября",
    "декабря",
)
WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def capitalised_alternation(pattern: str) -> str:
    """``pattern``'s alternatives each capitalised: ``jan(?:uary)?|may`` → ``Jan(?:uary)?|May``."""
    return "|".join(alternative.capitalize() for alternative in pattern.split("|"))


# --- stop words --------------------------------------------------------------------------
FUNCTION_WORDS_EN = frozenset(
    {
        *("a", "an", "the", "of", "for", "in", "on", "at", "to", "and", "or", "is"),
        *("are", "was", "were", "be", "by", "with", "from", "that", "this", "it", "its", "as"),
    }
)
STOP_WORDS_EN = FUNCTION_WORDS_EN | {
    *("but", "been", "being", "these", "those", "you", "your", "we", "our", "they", "their"),
    *("he", "she", "his", "her", "i", "my", "me", "us", "them", "can", "could", "will"),
    *("would", "shall", "should", "may", "might", "must", "do", "does", "did", "has"),
    *("have", "had", "not", "no", "there", "here", "than", "then", "so", "if", "when"),
    *("which", "who", "what", "how", "also", "about", "into", "over", "after", "before"),
}
STOP_WORDS_RU = frozenset(
    {
        *("и", "в", "во", "на", "с", "со", "по", "к", "ко", "у", "о", "об", "от", "до", "из"),
        *("за", "для", "при", "что", "это", "как", "а", "но", "же", "ли", "бы", "не", "ни"),
        *("вы", "вам", "ваш", "ваша", "ваши", "мы", "нас", "наш", "она", "он", "они", "оно"),
        *("его", "её", "их", "быть", "был", "была", "были", "есть"),
    }
)
STOP_WORDS = STOP_WORDS_EN | STOP_WORDS_RU
DETERMINERS_EN = frozenset({"the", "your", "our", "my", "a", "an", "this", "these", "those", "its"})
TOOL_NAME_FILLER = frozenset(
    {"a", "an", "the", "to", "of", "for", "by", "id", "ids", "info", "details", "data", "tool"}
)
EXPLANATION_STOP_WORDS = frozenset(
    {
        *("that", "this", "with", "from", "were", "have", "been", "than", "then", "they"),
        *("them", "their", "there", "which", "what", "when", "where", "does", "into", "only"),
        *("also", "some", "none", "more", "most", "other", "turn", "call", "calls", "tool"),
    }
)

# --- negation ----------------------------------------------------------------------------
NEGATIONS = frozenset(
    {
        *("not", "no", "never", "cannot", "cant", "can't", "won't", "don't", "doesn't"),
        *("isn't", "aren't", "wasn't", "weren't", "without", "none", "nor"),
        *("не", "нет", "нельзя", "никогда", "ни", "без"),
    }
)

# --- numbers -----------------------------------------------------------------------------
# Magnitude words after a number ("3 million"), in the order the number pattern tries them.
MAGNITUDE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9}

# Number words a count or an amount is written in ("three options", "три варианта"): the
# value extractor reads them as numbers, so "two articles" is the count 2 whether it is
# written in digits or not. Russian keeps the nominative and the genitive forms a count
# takes ("два варианта", "двух статей").
NUMBER_WORDS_EN = {
    **{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7},
    **{"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13},
    **{"fourteen": 14},
    **{"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19},
    **{"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70},
    **{"eighty": 80, "ninety": 90, "hundred": 100, "dozen": 12},
}
NUMBER_WORDS_RU = {
    **dict.fromkeys(("один", "одна", "одно", "одного", "одной"), 1),
    **dict.fromkeys(("два", "две", "двух"), 2),
    **dict.fromkeys(("три", "трёх", "трех"), 3),
    **dict.fromkeys(("четыре", "четырёх", "четырех"), 4),
    **dict.fromkeys(("пять", "пяти"), 5),
    **dict.fromkeys(("шесть", "шести"), 6),
    **dict.fromkeys(("семь", "семи"), 7),
    **dict.fromkeys(("восемь", "восьми"), 8),
    **dict.fromkeys(("девять", "девяти"), 9),
    **dict.fromkeys(("десять", "десяти"), 10),
    **{"одиннадцать": 11, "двенадцать": 12, "тринадцать": 13, "четырнадцать": 14},
    **{"пятнадцать": 15, "шестнадцать": 16, "семнадцать": 17, "восемнадцать": 18},
    **{"девятнадцать": 19, "двадцать": 20, "тридцать": 30, "сорок": 40, "пятьдесят": 50},
    **{"сто": 100, "дюжина": 12, "дюжины": 12},
}
NUMBER_WORDS = {**NUMBER_WORDS_EN, **NUMBER_WORDS_RU}
# What the documents of a retrieval are called when an answer counts them ("two
# articles", "3 sources", "две статьи"): the beginnings of the words.
DOCUMENT_NOUNS = (
    *("articl", "document", "source", "result", "passage", "page", "paper", "post", "record"),
    *("entr", "item", "стат", "докум", "источник", "материал", "запис", "результат"),
)
CURRENCY_CODES = ("USD", "EUR", "GBP", "JPY", "RUB", "INR", "CHF", "CNY", "CAD", "AUD")

# --- refusals ----------------------------------------------------------------------------
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
# An offer of a human, a callback, or a request for contacts.
OFFER_CUES = re.compile(
    r"\b(?:manager|operator|human|agent|specialist|colleague|support team|customer service"
    r"|contact|phone|e-?mail|call you|reach you|get back to you|connect you|transfer you"
    r"|escalat\w*)\b|менеджер|оператор|специалист|сотрудник|коллег|свяж|контакт|телефон"
    r"|почт|перезвон|передам|переключ",
    re.IGNORECASE,
)
# An honest "I don't know" as the embedded judge reads it (faithful by its rubric).
DECLINE_CUES = re.compile(
    r"\b(i (?:do not|don't|dont) know|i(?:'m| am) not sure|i (?:cannot|can't|could not|"
    r"couldn't) (?:find|tell|say|confirm)|i (?:do not|don't) have (?:that|this|the) "
    r"information|no information (?:about|on))\b|не знаю|нет информации",
    re.IGNORECASE,
)
