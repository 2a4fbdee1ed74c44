"""Elicitation forms rendered and filled from scripted input: hints, defaults, re-asking, accept/decline/cancel."""

from __future__ import annotations

from typing import Any

import pytest
from _ui_harness import captured_console, run, text

from backchannel import InvalidParams
from backchannel.client.url_flow import UrlElicitation
from backchannel.ui import Cancelled, FormRenderer, LinkConsent, Question, scripted
from backchannel.ui.form_prompt import confirmation_code

SIGNUP: dict[str, Any] = {
    "type": "object",
    "title": "Sign up",
    "description": "Tell us about you.",
    "properties": {
        "name": {"type": "string", "title": "Your name", "description": "as on your passport", "minLength": 2},
        "email": {"type": "string", "format": "email"},
        "birthday": {"type": "string", "format": "date"},
        "site": {"type": "string", "format": "uri"},
        "age": {"type": "integer", "minimum": 18, "maximum": 120},
        "newsletter": {"type": "boolean", "title": "Newsletter", "default": True},
        "plan": {
            "type": "string",
            "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": "Professional"}],
            "default": "free",
        },
        "topics": {"type": "array", "items": {"type": "string", "enum": ["python", "rust", "go"]}, "maxItems": 2},
    },
    "required": ["name", "email", "age"],
}
PARAMS = {"message": "Please sign up for the service.", "requestedSchema": SIGNUP}


def fill(params: dict[str, Any], answers: list[str | BaseException]) -> tuple[dict[str, Any], list[Question], str]:
    console = captured_console()
    asked: list[Question] = []
    result = run(FormRenderer(console, scripted(answers, asked)).run(params))
    return result, asked, text(console)


GOOD = ["Ada", "ada@example.com", "", "", "36", "<default>", "<default>", "python,go"]


def test_a_filled_form_is_accepted_with_defaults_and_choices() -> None:
    result, asked, shown = fill(PARAMS, [*GOOD, "a"])
    assert result == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "email": "ada@example.com",
            "age": 36,
            "newsletter": True,
            "plan": "free",
            "topics": ["python", "go"],
        },
    }
    prompts = [q.prompt for q in asked]
    assert prompts[:8] == [
        "name*: ",
        "email*: ",
        "birthday: ",
        "site: ",
        "age*: ",
        "newsletter [yes]: ",
        "plan [free]: ",
        "topics: ",
    ]
    assert prompts[8].startswith("[A]ccept / [D]ecline / [C]ancel")
    # The form's message, title and description, then each field's title, mark, description and hint.
    for expected in (
        "Sign up",
        "Please sign up for the service.",
        "Tell us about you.",
        "Fields marked * are required",
        "Your name * (name)  text, at least 2 characters",
        "as on your passport",
        "email *  e-mail address, e.g. name@example.com",
        "birthday  date, YYYY-MM-DD",
        "site  URI, e.g. https://example.com/page",
        "age *  whole number, 18 to 120",
        "Newsletter (newsletter)  yes/no, default yes",
        "1) Free (free)",
        "2) Professional (pro)",
        "topics  choose any, separated by commas, at most 2 choices",
        "Form sent.",
    ):
        assert expected in shown, expected


def test_defaults_of_text_are_prefilled_and_of_choices_shown_in_brackets() -> None:
    """A choice (or yes/no, or number) is not prefilled: what is typed replaces the default whole
    (a prefilled ``free`` followed by a typed ``2`` read ``free2``), and an empty answer takes it."""
    schema = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "default": "Weekly report"},
            "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"},
            "seats": {"type": "integer", "default": 10},
        },
    }
    result, asked, _ = fill({"message": "?", "requestedSchema": schema}, ["<default>", "2", "3", "a"])
    assert [(q.prompt, q.default) for q in asked[:3]] == [
        ("title: ", "Weekly report"),
        ("plan [free]: ", ""),
        ("seats [10]: ", ""),
    ]
    assert result["content"] == {"title": "Weekly report", "plan": "pro", "seats": 3}
    result, _, _ = fill({"message": "?", "requestedSchema": schema}, ["<default>", "", "", "a"])
    assert result["content"] == {"title": "Weekly report", "plan": "free", "seats": 10}


def test_titled_choices_are_completed_and_picked_by_label() -> None:
    answers = list(GOOD)
    answers[6] = "professional"
    result, asked, shown = fill(PARAMS, [*answers, "a"])
    assert result["content"]["plan"] == "pro"
    assert list(asked[6].completions) == ["free", "pro"]
    assert "Professional (pro)" in shown  # in the summary


def test_invalid_answers_are_explained_and_asked_again_on_the_spot() -> None:
    answers = [
        "A", "Ada",                       # too short
        "ada", "ada@example.com",         # not an e-mail
        "31/12/1990", "1990-12-31",       # not a date
        "example.com", "https://ada.dev",  # not a URI
        "17", "121", "forty", "36",       # out of range, not a number
        "perhaps", "no",                  # not yes/no
        "gold", "2",                      # not a choice
        "python,cobol", "python,rust,go", "rust",  # not a choice; too many
    ]  # fmt: skip
    result, asked, shown = fill(PARAMS, [*answers, ""])
    assert result["action"] == "accept"
    assert result["content"] == {
        "name": "Ada",
        "email": "ada@example.com",
        "birthday": "1990-12-31",
        "site": "https://ada.dev",
        "age": 36,
        "newsletter": False,
        "plan": "pro",
        "topics": ["rust"],
    }
    for problem in (
        "! name: must be at least 2 characters",
        "! email: not a valid e-mail address",
        "! birthday: not a valid date (expected YYYY-MM-DD)",
        "! site: not a valid URI",
        "! age: must be at least 18",
        "! age: must be at most 120",
        "! age: 'forty' is not a whole number",
        "! newsletter: answer yes or no",
        "! plan: 'gold' is not one of free (Free), pro (Professional)",
        "! topics: 'cobol' is not one of python, rust, go",
        "! topics: choose at most 2 options",
    ):
        assert problem in shown, problem
    # each re-ask is the same question again, right away
    assert [q.prompt for q in asked[:2]] == ["name*: ", "name*: "]


def test_a_required_field_cannot_be_skipped() -> None:
    result, _, shown = fill(PARAMS, ["", "Ada", *GOOD[1:], "a"])
    assert result["action"] == "accept"
    assert "! name: is required" in shown


@pytest.mark.parametrize(("answer", "action"), [("d", "decline"), ("decline", "decline"), ("c", "cancel")])
def test_decline_or_cancel_at_the_end(answer: str, action: str) -> None:
    result, _, shown = fill(PARAMS, [*GOOD, answer])
    assert result == {"action": action}
    assert f"Form {action}" in shown


@pytest.mark.parametrize("interrupt", [Cancelled(), KeyboardInterrupt(), EOFError()])
def test_esc_or_ctrl_c_at_any_question_cancels_the_form(interrupt: BaseException) -> None:
    result, asked, shown = fill(PARAMS, ["Ada", interrupt])
    assert result == {"action": "cancel"}
    assert len(asked) == 2
    assert "Form cancelled." in shown
    result, _, _ = fill(PARAMS, [*GOOD, interrupt])
    assert result == {"action": "cancel"}


def test_an_unclear_final_answer_is_asked_again() -> None:
    result, _, shown = fill(PARAMS, [*GOOD, "maybe", "a"])
    assert result["action"] == "accept"
    assert "answer a (accept), d (decline), c (cancel) or e (edit)" in shown


def test_edit_goes_round_again_with_the_answers_prefilled() -> None:
    result, asked, _ = fill(PARAMS, [*GOOD, "e", "<default>", "<default>", "", "", "40", "", "", "", "a"])
    assert result["content"]["age"] == 40
    assert result["content"]["name"] == "Ada"
    second_round = {q.prompt: q.default for q in asked[9:17]}
    assert second_round["name*: "] == "Ada"
    assert second_round["age* [36]: "] == ""  # shown, and taken by an empty answer
    assert second_round["topics [python, go]: "] == ""
    assert result["content"]["topics"] == ["python", "go"]


def test_a_form_without_fields_is_a_confirmation() -> None:
    result, asked, shown = fill({"message": "Proceed?", "requestedSchema": {"type": "object", "properties": {}}}, ["a"])
    assert result == {"action": "accept", "content": {}}
    assert "Proceed?" in shown and len(asked) == 1


def test_a_form_that_is_not_a_valid_schema_is_refused() -> None:
    bad = {"message": "?", "requestedSchema": {"type": "object", "properties": {"x": {"type": "object"}}}}
    with pytest.raises(InvalidParams, match="not a valid form"):
        fill(bad, [])


# -- URL mode ---------------------------------------------------------------------------------------


def consent(
    url: str, answers: list[str | BaseException], opener_result: Any = True
) -> tuple[dict[str, Any], str, list]:
    console = captured_console()
    opened: list[str] = []

    def opener(link: str) -> Any:
        opened.append(link)
        if isinstance(opener_result, Exception):
            raise opener_result
        return opener_result

    request = UrlElicitation(url, "Log in to connect your account.", "uitest")
    result = run(LinkConsent(console, scripted(answers), opener)(request))
    return result, text(console), opened


def test_a_link_is_opened_only_after_consent() -> None:
    result, shown, opened = consent("https://auth.example.com/login?x=1", ["y"])
    assert result == {"action": "accept"} and opened == ["https://auth.example.com/login?x=1"]
    assert "uitest asks you to open a link" in shown
    assert "Site: auth.example.com" in shown
    assert "URL:  https://auth.example.com/login?x=1" in shown
    assert "Opened in your browser" in shown


@pytest.mark.parametrize(("answers", "action"), [(["n"], "decline"), ([""], "decline"), (["?", Cancelled()], "cancel")])
def test_a_link_is_not_opened_on_decline_or_cancel(answers: list[str | BaseException], action: str) -> None:
    result, _, opened = consent("https://example.com", answers)
    assert result == {"action": action} and opened == []


def test_suspicious_links_carry_warnings_and_a_failed_browser_shows_the_link() -> None:
    result, shown, _ = consent("http://user@203.0.113.9/pay", ["yes"], opener_result=False)
    assert result == {"action": "accept"}
    assert "Warning: the URL is not encrypted" in shown
    assert "Warning: the URL carries a user name" in shown
    assert "open this link yourself: http://user@203.0.113.9/pay" in shown
    _, shown, _ = consent("https://example.com", ["yes"], opener_result=OSError("no browser"))
    assert "open this link yourself" in shown


def test_link_consent_accepts_raw_params_too() -> None:
    console = captured_console()
    answer = run(LinkConsent(console, scripted(["n"]))({"mode": "url", "url": "https://a.example", "message": "m"}))
    assert answer == {"action": "decline"}


def test_the_confirmation_code_is_shown_on_its_own_line() -> None:
    console = captured_console()
    message = (
        "Authorize the deployment.\n\nConfirmation code: 1234-5678. The page will ask for it; "
        "never type a code that someone else gave you."
    )
    request = UrlElicitation("http://127.0.0.1:8000/elicit/abc", message, "demo")
    assert run(LinkConsent(console, scripted(["y"]), None)(request)) == {"action": "accept"}
    shown = text(console)
    assert "Code: 1234-5678  (the page asks for it" in shown
    assert "The page will ask for it" not in shown  # the runtime's wording is replaced, not repeated
    assert "Authorize the deployment." in shown
    assert "Open this link in your browser: http://127.0.0.1:8000/elicit/abc" in shown
    assert "The page asks for the confirmation code 1234-5678." in shown
    assert confirmation_code("Your confirmation code: AB-12.") == "AB-12"
    assert confirmation_code("no code here") is None
