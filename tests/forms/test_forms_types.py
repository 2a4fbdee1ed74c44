"""``FormSpec``: Python types → the exact ``requestedSchema``, and accepted answers → the declared type."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import typing
from typing import Annotated, Any, Literal

import pydantic
import pytest
import typing_extensions
from pydantic import AnyUrl, BaseModel, EmailStr, Field, HttpUrl

from backchannel.forms import (
    Format,
    FormContentError,
    FormSchemaError,
    FormSpec,
    Titles,
    apply_defaults,
    check_requested_schema,
)


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Size(enum.StrEnum):
    S = "s"
    M = "m"


UTC = datetime.UTC


@dataclasses.dataclass
class Contact:
    name: Annotated[str, Field(min_length=2, max_length=50, title="Name")]
    email: EmailStr
    age: Annotated[int, "Your age", Field(ge=18, le=120)] = 30


CONTACT_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 50},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "description": "Your age", "minimum": 18, "maximum": 120, "default": 30},
    },
    "required": ["name", "email"],
}


def test_a_dataclass_becomes_a_flat_form() -> None:
    """EL-13: a dataclass form gives exactly this requestedSchema."""
    assert FormSpec.from_type(Contact).requested_schema == CONTACT_SCHEMA


class ContactModel(BaseModel):
    name: Annotated[str, Field(min_length=2, max_length=50, title="Name")]
    email: Annotated[str, Format("email")]
    age: int = Field(30, ge=18, le=120, description="Your age")


class ContactDict(typing.TypedDict):
    name: Annotated[str, Field(min_length=2, max_length=50, title="Name")]
    email: Annotated[str, Format("email")]
    age: typing.NotRequired[Annotated[int, "Your age", Field(ge=18, le=120)]]


class ContactDictX(typing_extensions.TypedDict, total=False):
    name: typing_extensions.Required[Annotated[str, Field(min_length=2, max_length=50, title="Name")]]
    email: typing_extensions.Required[Annotated[str, Format("email")]]
    age: Annotated[int, "Your age", Field(ge=18, le=120)]


def test_a_pydantic_model_gives_the_same_form() -> None:
    assert FormSpec.from_type(ContactModel).requested_schema == CONTACT_SCHEMA


@pytest.mark.parametrize("cls", [ContactDict, ContactDictX])
def test_a_typeddict_gives_the_same_form_without_defaults(cls: type) -> None:
    """typing.TypedDict works on 3.11 too (rebuilt by ``modernize``); NotRequired keys are optional."""
    expected = dict(CONTACT_SCHEMA, properties=dict(CONTACT_SCHEMA["properties"]))  # type: ignore[call-overload]
    expected["properties"]["age"] = {"type": "integer", "description": "Your age", "minimum": 18, "maximum": 120}
    assert FormSpec.from_type(cls).requested_schema == expected


def test_a_dict_schema_is_checked_as_is_and_copied() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "string"}}}
    spec = FormSpec.from_type(schema)
    assert spec.requested_schema == schema
    assert spec.requested_schema is not schema
    with pytest.raises(FormSchemaError, match=r"^x: nested objects"):
        FormSpec.from_type({"type": "object", "properties": {"x": {"type": "object", "properties": {}}}})


# -- every field kind ------------------------------------------------------------------------------


@dataclasses.dataclass
class Everything:
    text: str
    whole: int
    real: float
    flag: bool
    email: EmailStr
    url: AnyUrl
    day: datetime.date
    moment: datetime.datetime
    described: Annotated[str, "Shown under the field"]
    pattern: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
    positive: Annotated[int, Field(gt=0, lt=10)]
    ratio: Annotated[float, Field(ge=0.0, le=1.0)]
    literal: Literal["a", "b"]
    plain_enum: Color
    str_enum: Size
    titled_literal: Annotated[Literal["a", "b"], Titles({"a": "Alpha", "b": "Beta"})]
    titled_enum: Annotated[Color, Titles({Color.RED: "Red", Color.GREEN: "Green"})]
    multi: list[Literal["x", "y", "z"]]
    multi_set: Annotated[set[Size], Field(min_length=1, max_length=2)]
    multi_titled: Annotated[list[Color], Titles({"red": "Red", "green": "Green"})]
    multi_item_titled: frozenset[Annotated[Literal["x", "y"], Titles({"x": "Ex"})]]
    multi_tuple: tuple[Size, ...]


EVERYTHING = {
    "text": {"type": "string"},
    "whole": {"type": "integer"},
    "real": {"type": "number"},
    "flag": {"type": "boolean"},
    "email": {"type": "string", "format": "email"},
    "url": {"type": "string", "format": "uri"},
    "day": {"type": "string", "format": "date"},
    "moment": {"type": "string", "format": "date-time"},
    "described": {"type": "string", "description": "Shown under the field"},
    "pattern": {"type": "string", "pattern": "^[A-Z]{3}$"},
    "positive": {"type": "integer", "minimum": 1, "maximum": 9},
    "ratio": {"type": "number", "minimum": 0.0, "maximum": 1.0},
    "literal": {"type": "string", "enum": ["a", "b"]},
    "plain_enum": {"type": "string", "enum": ["red", "green"]},
    "str_enum": {"type": "string", "enum": ["s", "m"]},
    "titled_literal": {
        "type": "string",
        "oneOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}],
    },
    "titled_enum": {
        "type": "string",
        "oneOf": [{"const": "red", "title": "Red"}, {"const": "green", "title": "Green"}],
    },
    "multi": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}},
    "multi_set": {"type": "array", "items": {"type": "string", "enum": ["s", "m"]}, "minItems": 1, "maxItems": 2},
    "multi_titled": {
        "type": "array",
        "items": {"anyOf": [{"const": "red", "title": "Red"}, {"const": "green", "title": "Green"}]},
    },
    "multi_item_titled": {
        "type": "array",
        "items": {"anyOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "y"}]},
    },
    "multi_tuple": {"type": "array", "items": {"type": "string", "enum": ["s", "m"]}},
}


def test_every_field_kind_maps_to_its_primitive_shape() -> None:
    """EL-13 and SEP-1330: each Python form of each field, and all four enum shapes (never enumNames)."""
    spec = FormSpec.from_type(Everything)
    assert spec.requested_schema == {"type": "object", "properties": EVERYTHING, "required": list(EVERYTHING)}
    assert "enumNames" not in repr(spec.requested_schema)


def test_every_field_kind_parses_back_to_its_python_type() -> None:
    content = {
        "text": "t",
        "whole": 3.0,
        "real": 2,
        "flag": True,
        "email": "a@b.co",
        "url": "https://example.org/",
        "day": "2024-02-29",
        "moment": "2025-01-31T09:30:00Z",
        "described": "d",
        "pattern": "ABC",
        "positive": 9,
        "ratio": 0.5,
        "literal": "b",
        "plain_enum": "red",
        "str_enum": "m",
        "titled_literal": "a",
        "titled_enum": "green",
        "multi": ["z", "x"],
        "multi_set": ["s", "m"],
        "multi_titled": ["green"],
        "multi_item_titled": ["y"],
        "multi_tuple": ["m", "s"],
    }
    value = FormSpec.from_type(Everything).parse(content)
    assert value == Everything(
        text="t",
        whole=3,
        real=2.0,
        flag=True,
        email="a@b.co",
        url=AnyUrl("https://example.org/"),
        day=datetime.date(2024, 2, 29),
        moment=datetime.datetime(2025, 1, 31, 9, 30, tzinfo=UTC),
        described="d",
        pattern="ABC",
        positive=9,
        ratio=0.5,
        literal="b",
        plain_enum=Color.RED,
        str_enum=Size.M,
        titled_literal="a",
        titled_enum=Color.GREEN,
        multi=["z", "x"],
        multi_set={Size.S, Size.M},
        multi_titled=[Color.GREEN],
        multi_item_titled=frozenset({"y"}),
        multi_tuple=(Size.M, Size.S),
    )
    assert type(value.whole) is int
    assert type(value.real) is float


# -- defaults and optional fields (SEP-1034) -------------------------------------------------------


@dataclasses.dataclass
class Defaults:
    text: str = "hello"
    whole: int = 3
    real: float = 0.5
    flag: bool = False
    email: Annotated[str, Format("email")] = "me@example.org"
    day: datetime.date = datetime.date(2025, 1, 31)
    moment: datetime.datetime = datetime.datetime(2025, 1, 31, 9, 30, tzinfo=UTC)
    choice: Literal["a", "b"] = "b"
    color: Color = Color.GREEN
    titled: Annotated[Size, Titles({Size.S: "Small", Size.M: "Medium"})] = Size.M
    many: list[Literal["x", "y", "z"]] = dataclasses.field(default_factory=lambda: ["z", "x"])
    sizes: set[Size] = dataclasses.field(default_factory=lambda: {Size.M, Size.S})
    maybe: int | None = None
    maybe_set: int | None = 7
    unset: str | None = None


def test_defaults_are_sent_on_every_type() -> None:
    """SEP-1034: string, number, integer, boolean, single- and multi-select defaults, as wire values."""
    properties = FormSpec.from_type(Defaults).requested_schema["properties"]
    assert {name: prop.get("default", "<none>") for name, prop in properties.items()} == {
        "text": "hello",
        "whole": 3,
        "real": 0.5,
        "flag": False,
        "email": "me@example.org",
        "day": "2025-01-31",
        "moment": "2025-01-31T09:30:00+00:00",
        "choice": "b",
        "color": "green",
        "titled": "m",
        "many": ["z", "x"],
        "sizes": ["s", "m"],  # in choice order
        "maybe": "<none>",
        "maybe_set": 7,
        "unset": "<none>",
    }
    assert "required" not in FormSpec.from_type(Defaults).requested_schema


def test_round_trip_through_apply_defaults() -> None:
    """EL-14 then EL-62: the client fills defaults, the server parses the answer into the dataclass."""
    spec = FormSpec.from_type(Defaults)
    filled = apply_defaults(spec.requested_schema, {"text": "bye", "sizes": ["s"]})
    assert spec.parse(filled) == Defaults(text="bye", sizes={Size.S})
    assert spec.parse({}) == Defaults()  # a client that ignores defaults gets the same values


def test_round_trip_for_the_contact_form() -> None:
    spec = FormSpec.from_type(Contact)
    assert spec.parse(apply_defaults(spec.requested_schema, {"name": "Ada", "email": "ada@example.org"})) == Contact(
        "Ada", "ada@example.org", 30
    )


class Optionals(BaseModel):
    required_optional: int | None
    nickname: str | None = None


def test_optional_without_default_is_not_required_and_arrives_as_none() -> None:
    spec = FormSpec.from_type(Optionals)
    assert spec.requested_schema == {
        "type": "object",
        "properties": {"required_optional": {"type": "integer"}, "nickname": {"type": "string"}},
    }
    assert spec.parse({}) == Optionals(required_optional=None)


class TD(typing.TypedDict):
    a: int | None
    b: typing.NotRequired[str]


def test_a_typeddict_parses_to_a_dict() -> None:
    spec = FormSpec.from_type(TD)
    assert spec.parse({"b": "x"}) == {"a": None, "b": "x"}
    assert spec.parse({"a": 1}) == {"a": 1}


def test_a_dict_form_parses_to_the_dict_with_defaults() -> None:
    spec = FormSpec.from_type(
        {"type": "object", "properties": {"a": {"type": "integer", "default": 1}, "b": {"type": "string"}}}
    )
    assert spec.parse({"b": "x"}) == {"a": 1, "b": "x"}


class Aliased(BaseModel):
    model_config = pydantic.ConfigDict(populate_by_name=True)

    user_name: str = Field(alias="userName")
    site: HttpUrl | None = None


def test_a_model_alias_is_the_wire_name_and_model_validators_run() -> None:
    spec = FormSpec.from_type(Aliased)
    assert spec.requested_schema == {
        "type": "object",
        "properties": {"userName": {"type": "string"}, "site": {"type": "string", "format": "uri"}},
        "required": ["userName"],
    }
    assert spec.parse({"userName": "ada"}) == Aliased(user_name="ada")
    with pytest.raises(FormContentError) as caught:
        spec.parse({"userName": "ada", "site": "ftp://x.org"})
    assert caught.value.problems == ["site: not a valid URL for HttpUrl"]


# -- parse failures --------------------------------------------------------------------------------


def test_parse_lists_every_problem() -> None:
    """EL-62: the server validates what it received against what it asked for."""
    spec = FormSpec.from_type(Contact)
    with pytest.raises(FormContentError) as caught:
        spec.parse({"name": "A", "age": 200, "extra": 1})
    assert caught.value.problems == [
        "name: must be at least 2 characters",
        "email: is required",
        "age: must be at most 120",
        "extra: not a field of this form (it has name, email, age)",
    ]
    assert str(caught.value).startswith("the form answer is not valid: name: must be at least 2 characters; ")
    assert isinstance(caught.value, ValueError)


def test_a_naive_date_time_is_refused() -> None:
    spec = FormSpec.from_type(Everything)
    properties = spec.requested_schema["properties"]
    assert properties["moment"]["format"] == "date-time"
    with pytest.raises(FormContentError, match="moment: not a valid date-time"):
        spec.parse({"moment": "2025-01-31T09:30:00"})


@dataclasses.dataclass
class Checked:
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError("end must not come before start")


def test_a_check_in_post_init_becomes_a_content_problem() -> None:
    with pytest.raises(FormContentError) as caught:
        FormSpec.from_type(Checked).parse({"start": 2, "end": 1})
    assert caught.value.problems == ["end must not come before start"]


# -- refused types ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Address:
    street: str


class AddressModel(BaseModel):
    street: str


class AddressDict(typing.TypedDict):
    street: str


def _refusal(annotation: Any, default: Any = dataclasses.MISSING) -> str:
    fields: list[Any] = [("field", annotation) if default is dataclasses.MISSING else ("field", annotation, default)]
    cls = dataclasses.make_dataclass("Order", fields)
    with pytest.raises(FormSchemaError) as caught:
        FormSpec.from_type(cls)
    assert caught.value.field == "Order.field"
    return caught.value.problem


@pytest.mark.parametrize(
    ("annotation", "problem"),
    [
        (Address, "nested objects (Address) are not allowed in a form; use flat fields"),
        (AddressModel, "nested objects (AddressModel) are not allowed in a form; use flat fields"),
        (AddressDict, "nested objects (AddressDict) are not allowed in a form; use flat fields"),
        (dict[str, str], "nested objects (dict[str, str]) are not allowed in a form; use flat fields"),
        (Address | None, "nested objects (Address) are not allowed in a form; use flat fields"),
        (list[int], "a list field must be a multi-select of Literal or str-Enum choices, not list[int]"),
        (list[Address], "a list field must be a multi-select of Literal or str-Enum choices, not list[Address]"),
        (tuple[Size, Size], "a tuple field must be tuple[X, ...] of choices"),
        (int | str, "a union (int | str) cannot be one form field; only X | None"),
        (
            Any,
            "Any cannot be a form field; use str, int, float, bool, date, datetime, "
            "a Literal or str-Enum choice, or a list of those choices",
        ),
        (
            datetime.time,
            "time cannot be a form field; use str, int, float, bool, date, datetime, "
            "a Literal or str-Enum choice, or a list of those choices",
        ),
        (Literal[1, 2], "choices must be strings, not Literal[1, 2]"),
        (enum.IntEnum("Level", ["LOW", "HIGH"]), "the Enum Level must have string values to be choices"),
        (Annotated[str, Titles({"a": "A"})], "Titles applies only to Literal or Enum choices"),
        (Annotated[Literal["a"], Titles({"b": "B"})], "Titles names 'b', which is not a choice"),
        (Annotated[int, Format("email")], "Format('email') applies only to text fields, not int"),
        (Annotated[datetime.date, Format("email")], "Format('email') does not fit a date field"),
        (Annotated[float, Field(gt=0)], "gt cannot be expressed in a form for a float; use ge"),
        (Annotated[int, Field(multiple_of=2)], "multiple_of cannot be expressed in a form"),
        (Annotated[str, Field(ge=1)], "ge does not apply to a text field"),
        (Annotated[int, Field(max_length=3)], "max_length does not apply to a number field"),
        (Annotated[bool, Field(ge=1)], "ge does not apply to a yes/no field"),
        (Annotated[Literal["a"], Field(min_length=1)], "min_length does not apply to a choice field"),
        (
            Annotated[str, Field(pattern="(")],
            "'pattern' is not a valid regular expression: missing ), unterminated subpattern at position 0",
        ),
    ],
)
def test_what_a_form_cannot_hold_is_refused_naming_the_field(annotation: Any, problem: str) -> None:
    """EL-13: nested objects, arrays of non-enums and unexpressible constraints fail at registration."""
    assert _refusal(annotation) == problem


@pytest.mark.parametrize(
    ("annotation", "default", "problem"),
    [
        (Annotated[int, Field(ge=0)], -1, "the default -1 is not valid: must be at least 0"),
        (str, 5, "the default 5 is not valid: must be text, not 5"),
        (int, 2.5, "the default 2.5 is not valid: must be a whole number, not 2.5"),
        (Literal["a", "b"], "c", "the default 'c' is not valid: 'c' is not one of a, b"),
        (
            datetime.datetime,
            datetime.datetime(2025, 1, 1),
            "the default '2025-01-01T00:00:00' is not valid: not a valid date-time "
            "(expected RFC 3339 with a timezone, such as 2025-01-31T09:30:00Z)",
        ),
    ],
)
def test_an_invalid_default_is_refused(annotation: Any, default: Any, problem: str) -> None:
    """SEP-1034: a default must itself be a valid answer."""
    assert _refusal(annotation, default) == problem


def test_a_default_inside_annotated_field_is_refused_for_dataclasses() -> None:
    with pytest.raises(FormSchemaError, match=r"^Order\.field: a default inside Annotated"):
        FormSpec.from_type(dataclasses.make_dataclass("Order", [("field", Annotated[int, Field(default=3)])]))


@pytest.mark.parametrize("value", [int, list[int], "x", Contact("a", "b@c.de")])
def test_only_form_classes_and_dicts_are_forms(value: Any) -> None:
    with pytest.raises(FormSchemaError, match=r"^a form is a dataclass, TypedDict, pydantic model or JSON Schema dict"):
        FormSpec.from_type(value)


def test_nested_model_field_path_names_the_class() -> None:
    class Order(BaseModel):
        shipping: AddressModel

    with pytest.raises(FormSchemaError) as caught:
        FormSpec.from_type(Order)
    assert (
        str(caught.value) == "Order.shipping: nested objects (AddressModel) are not allowed in a form; use flat fields"
    )


# -- markers ---------------------------------------------------------------------------------------


def test_format_accepts_only_the_four_formats() -> None:
    assert [Format(name).name for name in ("email", "uri", "date", "date-time")] == [
        "email",
        "uri",
        "date",
        "date-time",
    ]
    with pytest.raises(FormSchemaError, match="unknown format 'hostname'"):
        Format("hostname")  # type: ignore[arg-type]


def test_titles_accepts_values_or_members_and_compares_by_value() -> None:
    assert Titles({Color.RED: "Red"}) == Titles({"red": "Red"})
    assert hash(Titles({Color.RED: "Red"})) == hash(Titles({"red": "Red"}))
    assert repr(Titles({"a": "A"})) == "Titles({'a': 'A'})"
    with pytest.raises(FormSchemaError):
        Titles({1: "One"})  # type: ignore[dict-item]


def test_every_generated_schema_passes_the_wire_check() -> None:
    for cls in (Contact, ContactModel, ContactDict, Everything, Defaults, Optionals, Aliased):
        check_requested_schema(FormSpec.from_type(cls).requested_schema)
