"""A cheap, deterministic detector for text that talks to the judge instead of the reader.

A report sentence (or a cited document) that addresses the assessor, judge or model ("Note to the assessor: ...
answer supported"), tells it to ignore its instructions, forges our prompt structure or hides such text behind
look-alike characters is flagged. Rules are regular expressions over a *folded* view of the text, in which
look-alike characters no longer hide anything: HTML entities decoded, NFKD compatibility forms (full-width,
ligatures, circled letters), invisible format characters (zero-width, bidi controls, soft hyphens, tag
characters) and combining marks dropped, Cyrillic/Greek homoglyphs of Latin letters mapped to Latin (in a second
view, so Russian rules still see Cyrillic), case folded, white space collapsed.

The phrase lists cover English, Chinese, Russian, Persian, Spanish, French and German. Where no rule fires,
`detect` asks the learned detector (judge.defence.learned).

The same file defines the attacks the calibration red-team suite applies (`load_attacks`, `apply_attack`).
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from judge.defence.learned import LearnedDetector, load_detector
from judge.defence.pieces import pieces
from judge.errors import InputError
from judge.settings import InjectionDetector

# Invisible characters that are not category Cf but render as nothing (fillers, blank braille, joiners).
_INVISIBLE_EXTRA = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
# Angle-bracket look-alikes a model may read as a tag delimiter (NFKD already maps full-width and small forms).
# Quotation marks that merely look similar (« » 《 》) are punctuation in French and Chinese and stay.
ANGLE_OPEN = "‹〈⟨❮❬❰⧼˂ᐸ〈"
ANGLE_CLOSE = "›〉⟩❯❭❱⧽˃ᐳ〉"
_ANGLES = str.maketrans({**dict.fromkeys(ANGLE_OPEN, "<"), **dict.fromkeys(ANGLE_CLOSE, ">")})
# Arabic-script letters that Persian writes differently: one spelling for matching.
_PERSIAN = str.maketrans({"ي": "ی", "ى": "ی", "ك": "ک", "ة": "ه", "ۀ": "ه"})
# Cyrillic and Greek letters that look like Latin ones (the usual homoglyph swaps).
_LATIN_HOMOGLYPHS = str.maketrans({
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y",
    "х": "x", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ɡ": "g", "ӏ": "l", "ԛ": "q", "ԝ": "w",
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
})
_SPACE = re.compile(r"\s+")


def is_invisible(char: str) -> bool:
    """Format characters (zero-width, bidi controls, soft hyphen, tag characters) and blank fillers."""
    return unicodedata.category(char) == "Cf" or char in _INVISIBLE_EXTRA


@lru_cache(maxsize=4096)
def fold_char(char: str) -> str:
    """One character as the folded view sees it: "" for invisible characters and combining marks, the
    compatibility decomposition otherwise, angle look-alikes as < and >."""
    if is_invisible(char):
        return ""
    decomposed = unicodedata.normalize("NFKD", char)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c) and not is_invisible(c))
    return kept.translate(_ANGLES).translate(_PERSIAN)


def fold(text: str) -> str:
    """The look-alike-free view of `text` that the rules read (lower case, single spaces)."""
    if "&" in text:
        text = html.unescape(text)
    folded = "".join(fold_char(c) for c in text) if not text.isascii() else text
    return _SPACE.sub(" ", folded.casefold()).strip()


def latinised(folded: str) -> str:
    return folded.translate(_LATIN_HOMOGLYPHS)


def _fold_pattern(source: str) -> str:
    """Patterns are written with accents and natural spelling; fold them as the text is folded (no case folding:
    that would turn \\S into \\s)."""
    return "".join(c if c.isascii() else fold_char(c) for c in source)


# Who the judge is, in English.
_JUDGE_EN = (r"(?:assessors?|judges?|evaluators?|graders?|annotators?|raters?|reviewers?|checkers?|verifiers?"
             r"|fact[- ]?checkers?|examiners?|markers?|ai|llms?|language models?|models?|assistants?|chatbots?|bots?"
             r"|gpts?|classifiers?)")
_LABEL_EN = r"(?:fully |fully_)?(?:supported|attributable|entailed|not_supported|unsupported|cannot_judge)\b"
# Verbs that tell a judge what to answer; everyday verbs (judge, consider, score, count) are left out, they fired
# on news text ("the judge ruled the motion supported").
_ANSWER_VERB_EN = (r"(?:(?:answer|respond|reply|output|return|mark|label|rate|grade|classify|tag|treat|flag)"
                   r"(?:s|ed|ing)?|label(?:l?ed|l?ing)|verdict)")

RULES: tuple[tuple[str, str], ...] = (
    # --- English -------------------------------------------------------------------------------------------------
    ("en_note_to_judge", rf"\b(?:note|message|memo|reminder|instructions?|hint|attention|notice|request|p\.?s\.?"
                         rf"|comment|remark|warning)\s*(?:from [^.:;]{{1,40}}?\s*)?(?:to|for)\s+(?:the |any |all |our "
                         rf"|every |this |whoever )?(?:automated |automatic |human |ai |llm |official |evaluation "
                         rf"|grading |judging |scoring |assessment )?{_JUDGE_EN}\b"),
    ("en_judge_should", rf"\b(?:ai |llm |automated )?{_JUDGE_EN} (?:should|must|need to|are asked to|please) "
                        rf"(?:note|know|be aware|keep in mind|accept|mark|label|answer)\b"),
    ("en_dear_judge", rf"\b(?:dear|hey|hello|hi|attention|calling)[ ,]+(?:the |all |any )?(?:automated |ai |llm )?"
                      rf"{_JUDGE_EN}\b"),
    ("en_judge_vocative", r"(?:^|[.!?(\[\"'*—–-] ?)(?:assessor|judge|evaluator|grader|annotator|ai|llm|assistant"
                          r"|reviewer)s? ?:"),
    ("en_ignore_instructions", r"\b(?:ignore|disregard|forget|override|bypass|overrule|set aside)\s+(?:all |any "
                               r"|of |the |your |these |those |every )*(?:previous|prior|above|earlier|preceding"
                               r"|foregoing|original|system|your|assessment|evaluation|grading|judging|other)\s+"
                               r"(?:\w+ )?(?:instructions?|rules?|guidelines?|directions?|prompts?|criteria"
                               r"|directives?|orders?)"),
    ("en_answer_label", rf"\b{_ANSWER_VERB_EN}\s+(?:\S+\s+){{0,5}}?(?:as|with|is|:|=)?\s*[\"'“‘«]?{_LABEL_EN}"),
    ("en_answer_quoted", r"\b(?:answer|respond|reply|say|output|return|write)\w*\s*(?:with|only)?\s*[:\-]?\s*[\"'“‘«]"
                         r"(?:yes|true|supported|correct|attributable)[\"'”’»]"),
    ("en_verdict_field", r"[\"']?(?:verdict|label|decision|needs_citation|claims_absence|repeated|answer_labels)"
                         r"[\"']?\s*[:=]\s*[\"'\[]?\s*(?:supported|true|yes|attributable|a\d)"),
    # Claims about the cited document only a judge cares about ("states all of this verbatim"); a plain "the cited
    # article says ..." is ordinary reporting and is not flagged.
    ("en_cited_doc_claims", r"\b(?:cited|referenced|attached|provided|linked|accompanying)\s+(?:document|source"
                            r"|reference|article|passage|text|evidence)s?\s+(?:\S+\s+){0,4}?(?:states?|confirms?"
                            r"|supports?|contains?|verif(?:y|ies)|proves?|says?|backs?)\s+(?:up\s+)?(?:all of (?:this"
                            r"|the above|it)|everything|every (?:claim|detail|word|statement|fact)|this (?:sentence"
                            r"|claim|statement)|it (?:all|entirely|fully))"),
    ("en_verbatim_claim", r"\b(?:states?|confirms?|contains?|says?|supports?|repeats?|shows?)\s+(?:\S+\s+){0,5}?"
                          r"(?:verbatim|word[- ]for[- ]word|word[- ]by[- ]word)"
                          r"|\b(?:verbatim|word[- ]for[- ]word) in the (?:cited|referenced|attached) "
                          r"(?:document|source)"),
    ("en_you_must", rf"\byou\s+(?:must|should|shall|will|need to|have to|are (?:required|instructed|asked|told|"
                    rf"expected) to)\s+(?:now |always |only |simply )?(?:answer|respond|reply|output|mark|label"
                    rf"|rate|classify|judge|score|say|return|treat|consider|ignore|disregard|accept|approve)\b"
                    rf"(?:\s+\S+){{0,8}}?\s+(?:{_LABEL_EN}|[\"'“](?:yes|true)|this (?:sentence|claim|citation))"),
    ("en_do_not_penalise", r"\b(?:do not|don't|never|must not)\s+(?:\w+ )?(?:penali[sz]e|flag|reject|downgrade"
                           r"|mark down|fail|question)\s+(?:this|the)\s+(?:sentence|claim|statement|citation"
                           r"|report|answer)"),
    ("en_new_instructions", r"\b(?:new|updated|revised|additional|hidden|secret|real|true|override|system)\s+"
                            r"(?:instructions?|directives?|system prompt|task)\b\s*[:\-]"),
    # --- structure forged from inside the data --------------------------------------------------------------------
    ("fake_tag", r"<\s*/?\s*(?:sentence|document|request|questions|absences|report|instructions?|system|assistant"
                 r"|user|im_start|im_end|judge|assessor|prompt)\b"),
    ("chat_control_token", r"<\s*\|[^|<>]{1,40}\|\s*>|\[\s*/?\s*inst\s*\]|<<\s*/?\s*sys\s*>>"),
    ("forged_report_line", r"\[\s*\d+\s*\]\s*\(\s*(?:cites?\b|no citations?\b)"),
    # --- Chinese ----------------------------------------------------------------------------------------------------
    ("zh_ignore_instructions", r"(?:忽略|无视|忽视|不要理会|不要理睬|忘记|忘掉)(?:掉)?(?:之前|以上|上述|前面|先前"
                               r"|所有|全部|其他|你的|原有|原来)*的?(?:所有|全部)?(?:指令|指示|说明|规则|要求|提示)"),
    ("zh_note_to_judge", r"(?:致|给|提醒|提示|注意|备注|说明|留言|请)[：:，,]?\s*(?:各位|尊敬的|亲爱的)?\s*"
                         r"(?:评估|评审|评测|审核|评判|评分|打分|标注|阅卷|核查)(?:员|者|人员|专家|老师|模型)"
                         r"|(?:致|给)\s*(?:模型|人工智能|ai|大模型|语言模型|裁判)"),
    ("zh_answer_label", r"(?:回答|答案|输出|判定|判断|结论|标记|标注|评为|认定|选择|选)(?:应|应该|必须|只能)?"
                        r"(?:为|是|成)?\s*[：:]?\s*[\"“「『]?\s*(?:支持|有依据|已支持|有支撑|supported|可归因)"),
    ("zh_cited_doc_claims", r"(?:所)?引用的?(?:文档|文件|文献|来源|资料)(?:中)?(?:已经?)?(?:逐字|一字不差地?|完整|"
                            r"完全|全部|明确)(?:地)?(?:说明|陈述|证实|支持|包含|记载|写明|提到)"),
    ("zh_system", r"系统提示|新的?指令[：:]|以下指令|最新指令"),
    # --- Russian ----------------------------------------------------------------------------------------------------
    ("ru_ignore_instructions", r"(?:игнорируй(?:те)?|не обращай(?:те)? внимания на|забудь(?:те)?|проигнорируй(?:те)?"
                               r"|отбрось(?:те)?)\s+(?:\S+\s+){0,2}?(?:инструкци|указани|правил|предписани)"),
    ("ru_note_to_judge", r"(?:примечание|заметка|сообщение|обращение|внимание|указание|записка|пометка)\s+"
                         r"(?:для|к)\s+(?:\S+\s+)?(?:оценщик|асессор|эксперт|проверяющ|судь|модел|ии\b|нейросет"
                         r"|экзаменатор|рецензент|разметчик|аннотатор)"),
    ("ru_dear_judge", r"(?:уважаем|дорог)\w*\s+(?:оценщик|асессор|проверяющ|эксперт|судья|модель|рецензент)"),
    ("ru_answer_label", r"(?:ответь(?:те)?|отвечай(?:те)?|выведи(?:те)?|пометь(?:те)?|отметь(?:те)?|оцени(?:те)?"
                        r"|классифицируй(?:те)?|считай(?:те)?|укажи(?:те)?|поставь(?:те)?)\s+(?:\S+\s+){0,4}?"
                        r"[«\"“]?(?:подтвержд|поддержива|обоснован|supported|\"да\"|«да»)"),
    ("ru_cited_doc_claims", r"(?:цитируем|процитированн|указанн|приведенн|упомянут)\w*\s+(?:документ|источник)\w*\s+"
                            r"(?:\S+\s+){0,5}?(?:дословно|слово в слово|полностью подтвержда|подтвержда)"),
    # --- Persian ----------------------------------------------------------------------------------------------------
    ("fa_ignore_instructions", r"(?:دستور|دستورالعمل|تعلیمات|راهنمایی|قوانین)\S*\s*(?:\S+\s*){0,3}?"
                               r"(?:را\s*)?(?:نادیده\s*بگیر|فراموش\s*کن)"),
    ("fa_note_to_judge", r"(?:یادداشت|توجه|پیام|نکته|تذکر)\s*(?:\S+\s*)?(?:برای|به)\s*(?:\S+\s*)?(?:ارزیاب|داور"
                         r"|بررسی\s*کننده|مدل|هوش\s*مصنوعی|ممیز|ارزشیاب|مصحح)"),
    ("fa_dear_judge", r"(?:ارزیاب|داور|بررسی\s*کننده|مصحح)\S*\s*(?:گرامی|عزیز|محترم)"),
    ("fa_answer_label", r"(?:پاسخ|جواب|برچسب|نتیجه)\s*(?:\S+\s*){0,3}?[«\"]?\s*(?:پشتیبانی\s*شده|تایید\s*شده"
                        r"|تأیید\s*شده|مستند|supported)"),
    ("fa_cited_doc_claims", r"(?:سند|مدرک|منبع)\s*(?:\S+\s*){0,3}?(?:کلمه\s*به\s*کلمه|عینا|به\s*طور\s*کامل)"),
    # --- Spanish ----------------------------------------------------------------------------------------------------
    ("es_ignore_instructions", r"\b(?:ignora|ignore|ignoren|olvida|olvide|omite|omita|descarta|descarte)\s+(?:\S+\s+)"
                               r"{0,3}?(?:instrucciones|indicaciones|directrices|[oó]rdenes)"),
    ("es_note_to_judge", r"\b(?:nota|mensaje|aviso|recordatorio|instrucci[oó]n)\s+(?:para|a|al)\s+(?:el |la |los "
                         r"|las )?(?:evaluador|evaluadora|asesor|juez|revisor|corrector|modelo|ia|calificador"
                         r"|anotador|examinador)"),
    ("es_dear_judge", r"\b(?:estimad|querid)[oa]s?\s+(?:evaluador|juez|revisor|modelo|asesor|corrector)"),
    ("es_answer_label", r"\b(?:responde|responda|contesta|conteste|marca|marque|califica|califique|clasifica"
                        r"|clasifique|etiqueta|etiquete)\s+(?:\S+\s+){0,4}?(?:como|con)?\s*[\"“«]?\s*"
                        r"(?:respaldad|apoyad|sustentad|supported|\"s[ií]\")"),
    ("es_cited_doc_claims", r"\bdocumento\s+(?:citado|referido)\s+(?:\S+\s+){0,5}?(?:textualmente|literalmente"
                            r"|palabra por palabra)"),
    # --- French -----------------------------------------------------------------------------------------------------
    ("fr_ignore_instructions", r"\b(?:ignore[zr]?|oublie[zr]?|ne tenez pas compte d\S*|ne tiens pas compte d\S*)\s+"
                               r"(?:\S+\s+){0,3}?(?:instructions|consignes|directives)"),
    ("fr_note_to_judge", r"\b(?:note|message|remarque|avis|rappel)\s+(?:a|pour)\s+(?:l'|l’|le |la |les )?"
                         r"(?:évaluateur|évaluatrice|correcteur|correctrice|juge|annotateur|modèle|ia|examinateur"
                         r"|relecteur|évaluateurs|correcteurs)"),
    ("fr_dear_judge", r"\b(?:cher|chère|chers)\s+(?:évaluateur|évaluatrice|correcteur|juge|modèle|examinateur)"),
    ("fr_answer_label", r"\b(?:répondez|réponds|répondre|marquez|indiquez|classez|notez|étiquetez|considérez)\s+"
                        r"(?:\S+\s+){0,4}?[\"“«]?\s*(?:soutenu|étayé|appuyé|supported|\"oui\"|« ?oui ?»)"),
    ("fr_cited_doc_claims", r"\bdocument\s+cité\s+(?:\S+\s+){0,6}?(?:mot pour mot|textuellement|mot à mot)"),
    # --- German -----------------------------------------------------------------------------------------------------
    ("de_ignore_instructions", r"\b(?:ignoriere|ignorieren sie|vergiss|vergessen sie|missachte|missachten sie)\s+"
                               r"(?:\S+\s+){0,3}?(?:anweisungen|anordnungen|instruktionen|vorgaben|befehle)"),
    ("de_note_to_judge", r"\b(?:hinweis|notiz|nachricht|anmerkung|mitteilung)\s+(?:für|an)\s+(?:den |die |das )?"
                         r"(?:prüfer|prüferin|gutachter|bewerter|bewerterin|beurteiler|korrektor|richter|modell|ki"
                         r"|evaluator|annotator)"),
    ("de_dear_judge", r"\b(?:liebe[rs]?|sehr geehrte[rs]?)\s+(?:prüfer|gutachter|bewerter|korrektor|modell)"),
    ("de_answer_label", r"\b(?:antworte|antworten sie|markiere|markieren sie|bewerte|bewerten sie|stufe|stufen sie"
                        r"|klassifiziere|kennzeichne|gib)\s+(?:\S+\s+){0,5}?(?:als|mit)?\s*[\"„“»]?\s*(?:gestützt"
                        r"|belegt|unterstützt|supported|\"ja\")"),
    ("de_cited_doc_claims", r"\bzitierte\w*\s+(?:dokument|quelle)\w*\s+(?:\S+\s+){0,5}?(?:wörtlich|wortwörtlich"
                            r"|wortgetreu)"),
)

# The text is case-folded before matching, so the patterns (all lower case) need no IGNORECASE, which is slower.
_COMPILED = tuple((name, re.compile(_fold_pattern(source))) for name, source in RULES)


@dataclass(frozen=True)
class Detection:
    """Whether a text addresses the judge, and who said so: the first rule that fired (with the folded text it
    matched), or else the learned detector (rule LEARNED, the piece it scored highest and that score)."""

    flagged: bool
    rule: str | None = None
    matched: str | None = None
    score: float | None = None


LEARNED = "learned"
# Spans with fewer letters are not scored: a lone ":" or "</s>" has too few n-grams for a linear model to judge
# (tags are the rules' business).
MIN_LETTERS = 5


def detect(text: str) -> Detection:
    """The rules, then, where none fires, the learned detector (judge.defence.learned), on `text`: what flags text
    under every detector stack. The script check flags nothing: it withholds (judge.defence.quarantine). A sentence
    is checked by the flags and again by the quarantine, so short texts are remembered; documents are checked once
    per run."""
    return _detect_short(text) if len(text) <= SHORT_TEXT else detect_uncached(text)


SHORT_TEXT = 2000


@lru_cache(maxsize=8192)
def _detect_short(text: str) -> Detection:
    return detect_uncached(text)


def detect_uncached(text: str) -> Detection:
    """`detect` without the memory of short texts (what a first look at a text costs)."""
    found = detect_rules(text)
    return found if found.flagged else detect_learned(text)


def uses_script(detector: InjectionDetector) -> bool:
    """Whether the quarantine also withholds pieces in a foreign script (judge.defence.script)."""
    return "script" in detector.split("+")


def detect_rules(text: str) -> Detection:
    """The first rule that fires on `text` (the rule detector alone)."""
    folded = fold(text)
    views = [folded]
    if not folded.isascii() and (latin := latinised(folded)) != folded:
        views.append(latin)
    for name, pattern in _COMPILED:
        for view in views:
            match = pattern.search(view)
            if match:
                return Detection(True, name, match.group(0))
    return Detection(False)


def _letters(text: str) -> int:
    return sum(char.isalpha() for char in text)


def detect_learned(text: str, detector: LearnedDetector | None = None) -> Detection:
    """The learned detector alone (the shipped weights by default) on the spans of `text` the quarantine can
    withhold: each piece (judge.defence.pieces: bracketed remarks, tag contents, sentences) with at least
    MIN_LETTERS letters and, for a text of several pieces on one line (a sentence, not a document), the whole.
    Flagged when the best span's score reaches the detector's threshold; that span and its score are reported
    either way."""
    model = detector if detector is not None else load_detector()
    parts = [part for part in pieces(text) if part.strip()]
    spans = [part for part in parts if _letters(part) >= MIN_LETTERS]
    if len(parts) > 1 and len(text) <= SHORT_TEXT and "\n" not in text.strip() and _letters(text) >= MIN_LETTERS:
        spans.append(text)
    best_score, best_span = 0.0, ""
    for span in spans:
        score = model.score(fold(span))
        if score > best_score:
            best_score, best_span = score, span
    if not best_span:
        return Detection(False)
    flagged = best_score >= model.threshold
    return Detection(flagged, LEARNED if flagged else None, best_span.strip(), round(best_score, 4))


def addresses_judge(text: str) -> bool:
    return detect(text).flagged


# --- attacks ------------------------------------------------------------------------------------------------------

ATTACKS_FILE = Path(__file__).resolve().parents[1] / "data" / "attacks.json"
# Phrasings of each family of calibration/detector/make_data.py that the learned detector never trained on (its
# test-split templates; make_data.py writes this file): `calibrate --attack unseen`, the flip rate under attacks
# nobody wrote a rule for.
UNSEEN_ATTACKS_FILE = ATTACKS_FILE.with_name("unseen-attacks.json")
TARGETS = ("sentence", "document", "report")
_ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060")


@dataclass(frozen=True)
class Attack:
    """One attack kind: where its text goes and the variants of that text."""

    kind: str
    target: str  # sentence | document | report (an earlier sentence of the judged one's report)
    placement: str  # append | prepend
    texts: tuple[str, ...]
    obfuscate: str | None = None  # zero_width | full_width
    description: str = ""

    def payload(self, claim: str = "", doc_id: str = "D1", variant: int = 0) -> str:
        text = self.texts[variant % len(self.texts)].replace("{{claim}}", claim).replace("{{doc_id}}", doc_id)
        if self.obfuscate == "zero_width":
            # A different invisible character after each letter, so one replace() cannot undo it.
            return "".join(c + _ZERO_WIDTH[i % 4] if c.isalpha() else c for i, c in enumerate(text))
        if self.obfuscate == "full_width":
            return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text)
        return text

    def apply(self, text: str, claim: str = "", doc_id: str = "D1", variant: int = 0) -> str:
        payload = self.payload(claim, doc_id, variant)
        # Sentences stay one paragraph unless the payload itself breaks lines; documents get the note on its own line.
        glue = " " if self.target != "document" else "\n"
        if self.placement == "prepend":
            return payload + ("" if payload[-1:].isspace() else glue) + text
        return text + ("" if payload[:1].isspace() else glue) + payload


def load_attacks(path: str | Path | None = None) -> dict[str, Attack]:
    """The attack kinds of a JSON file of the shape of judge/data/attacks.json (the bundled one by default)."""
    return _load_attacks(Path(path).resolve() if path is not None else ATTACKS_FILE)


@cache
def _load_attacks(path: Path) -> dict[str, Attack]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"cannot read the attacks file: {error}", path) from None
    entries = raw.get("attacks") if isinstance(raw, dict) else None
    if not isinstance(entries, dict) or not entries:
        raise InputError('expected {"attacks": {KIND: {"target": ..., "texts": [...]}, ...}}', path)
    attacks = {}
    for kind, entry in entries.items():
        texts = entry.get("texts") if isinstance(entry, dict) else None
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t.strip() for t in texts):
            raise InputError(f"attack '{kind}': 'texts' must be a non-empty list of non-empty strings", path)
        if entry.get("target") not in TARGETS:
            raise InputError(f"attack '{kind}': 'target' must be one of {', '.join(TARGETS)}", path)
        if entry.get("placement", "append") not in ("append", "prepend"):
            raise InputError(f"attack '{kind}': 'placement' must be append or prepend", path)
        if entry.get("obfuscate") not in (None, "zero_width", "full_width"):
            raise InputError(f"attack '{kind}': 'obfuscate' must be zero_width or full_width", path)
        attacks[kind] = Attack(kind, entry["target"], entry.get("placement", "append"), tuple(texts),
                               entry.get("obfuscate"), entry.get("description", ""))
    return attacks


def apply_attack(kind: str, text: str, *, claim: str = "", doc_id: str = "D1", variant: int = 0,
                 attacks: dict[str, Attack] | None = None) -> str:
    """`text` (the attack's target: the judged sentence, the cited document, or an earlier report sentence) with
    the attack applied. `claim` fills {{claim}} (the judged sentence, for forged report lines); `variant` picks
    one of the kind's texts (modulo their number), so a suite can spread variants over items deterministically."""
    known = attacks if attacks is not None else load_attacks()
    if kind not in known:
        raise ValueError(f"unknown attack kind '{kind}'; known: {', '.join(sorted(known))}")
    return known[kind].apply(text, claim=claim, doc_id=doc_id, variant=variant)
