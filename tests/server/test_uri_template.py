"""RFC 6570 expansion (the RFC's own section 3.2 examples) and matching."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backchannel.types.uri_template import UriTemplate

# RFC 6570 section 3.2.1
RFC_VALUES: dict[str, Any] = {
    "count": ("one", "two", "three"),
    "dom": ("example", "com"),
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

RFC_EXAMPLES = [
    # 3.2.1 variable expansion
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # 3.2.2 simple string expansion
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    # 3.2.3 reserved expansion
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    # 3.2.4 fragment expansion
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    # 3.2.5 label expansion
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # 3.2.6 path segment expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    # 3.2.7 path-style parameter expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    # 3.2.8 form-style query expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    # 3.2.9 form-style query continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]


@pytest.mark.parametrize(("template", "expected"), RFC_EXAMPLES)
def test_rfc_examples_expand(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VALUES) == expected


def test_variables_in_order_without_duplicates() -> None:
    template = UriTemplate("users://{user_id}/posts{?limit,offset}{&user_id}")
    assert template.variables == ("user_id", "limit", "offset")
    assert UriTemplate("file:///readme.md").variables == ()


def test_scalars_are_stringified() -> None:
    template = UriTemplate("x://{a}/{b}{?c}")
    assert template.expand({"a": 5, "b": True, "c": 1.5}) == "x://5/true?c=1.5"


def test_literals_outside_the_uri_alphabet_are_encoded() -> None:
    assert UriTemplate("x://a b/{v}").expand({"v": "c"}) == "x://a%20b/c"


@pytest.mark.parametrize(
    ("template", "position"),
    [("x://{a", 4), ("x://a}", 5), ("x://{a{b}}", 4), ("{}", 1), ("{a,}", 3), ("{a b}", 1), ("{=a}", 1)],
)
def test_malformed_templates_name_the_position(template: str, position: int) -> None:
    with pytest.raises(ValueError, match=f"position {position}"):
        UriTemplate(template)


def test_bad_prefix_is_rejected() -> None:
    for template in ("{a:0}", "{a:10000}", "{a:x}", "{a*:3}"):
        with pytest.raises(ValueError, match="invalid variable"):
            UriTemplate(template)


def test_prefix_on_a_list_is_an_error() -> None:
    with pytest.raises(ValueError, match="prefix"):
        UriTemplate("{list:3}").expand({"list": ["a"]})


# -- matching ----------------------------------------------------------------------------------------


def test_match_simple() -> None:
    template = UriTemplate("test://template/{id}/data")
    assert template.match("test://template/42/data") == {"id": "42"}
    assert template.match("test://template/a/b/data") is None
    assert template.match("test://template//data") is None
    assert template.match("test://template/42/data/more") is None


def test_match_decodes_values() -> None:
    assert UriTemplate("file:///{path}").match("file:///a%20b%2Fc") == {"path": "a b/c"}


def test_reserved_spans_slashes() -> None:
    assert UriTemplate("file:///{+path}").match("file:///docs/a/b.md") == {"path": "docs/a/b.md"}
    assert UriTemplate("file:///{path}").match("file:///docs/a/b.md") is None


def test_query_any_order_and_optional() -> None:
    template = UriTemplate("users://{user_id}/posts{?limit,offset}")
    assert template.match("users://7/posts") == {"user_id": "7"}
    assert template.match("users://7/posts?offset=10&limit=5") == {
        "user_id": "7",
        "limit": "5",
        "offset": "10",
    }
    assert template.match("users://7/posts?limit=5") == {"user_id": "7", "limit": "5"}
    assert template.match("users://7/posts?other=1&limit=a%26b") == {"user_id": "7", "limit": "a&b"}


def test_query_continuation_shares_the_query() -> None:
    template = UriTemplate("search{?q}{&page}")
    assert template.match("search?page=2&q=cats") == {"q": "cats", "page": "2"}
    fixed = UriTemplate("search?fixed=yes{&x}")
    assert fixed.match("search?fixed=yes&x=1") == {"x": "1"}
    assert fixed.match("search?fixed=yes") == {}


def test_exploded_segments_are_lists() -> None:
    template = UriTemplate("repo://files{/segments*}")
    assert template.match("repo://files/src/main.py") == {"segments": ["src", "main.py"]}
    assert template.match("repo://files") == {}
    assert UriTemplate("x://h{?tag*}").match("x://h?tag=a&tag=b") == {"tag": ["a", "b"]}
    assert UriTemplate("x://{list*}").match("x://a,b") == {"list": ["a", "b"]}


def test_other_operators_match() -> None:
    assert UriTemplate("x://h{/a,b}").match("x://h/1/2") == {"a": "1", "b": "2"}
    assert UriTemplate("x://h/file{.ext}").match("x://h/file.md") == {"ext": "md"}
    assert UriTemplate("x://h/p{;a,b}").match("x://h/p;b=2;a=1") == {"a": "1", "b": "2"}
    assert UriTemplate("x://h/{a,b}").match("x://h/1,2") == {"a": "1", "b": "2"}
    assert UriTemplate("x://h/{a}{#frag}").match("x://h/p#sec/1") == {"a": "p", "frag": "sec/1"}


def test_repeated_variable_must_agree() -> None:
    template = UriTemplate("x://{a}/{a}")
    assert template.match("x://1/1") == {"a": "1"}
    assert template.match("x://1/2") is None


def test_equality_and_repr() -> None:
    assert UriTemplate("x://{a}") == UriTemplate("x://{a}")
    assert len({UriTemplate("x://{a}"), UriTemplate("x://{a}")}) == 1
    assert repr(UriTemplate("x://{a}")) == "UriTemplate('x://{a}')"
    assert str(UriTemplate("x://{a}")) == "x://{a}"


# -- round trip --------------------------------------------------------------------------------------

any_text = st.text(st.characters(exclude_categories=["Cs"]), min_size=1)
# Reserved expansion passes reserved characters and %XX through, so '?', '#'
# (which end the path) and '%' (which would be decoded) are left out.
reserved_text = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="?#%"),
    min_size=1,
)


@given(user_id=any_text, limit=st.none() | st.text(st.characters(exclude_categories=["Cs"])))
def test_round_trip_simple_and_query(user_id: str, limit: str | None) -> None:
    template = UriTemplate("users://{user_id}/posts{?limit,offset}")
    values = {"user_id": user_id} | ({"limit": limit} if limit is not None else {})
    assert template.match(template.expand(values)) == values


@given(path=reserved_text)
def test_round_trip_reserved(path: str) -> None:
    template = UriTemplate("file:///{+path}")
    assert template.match(template.expand({"path": path})) == {"path": path}


@given(segments=st.lists(st.text(st.characters(exclude_categories=["Cs"])), min_size=1))
def test_round_trip_exploded_path(segments: list[str]) -> None:
    template = UriTemplate("repo://files{/segments*}")
    assert template.match(template.expand({"segments": segments})) == {"segments": segments}
