"""Why msgspec: the numbers behind the codec choice in docs/architecture.md.

    python benchmarks/codec_choice.py

Measures one typical `tools/call` line: decode, encode of its result, and
validating its params against a typed model. Best of 3 runs of 200,000 each.
"""

from __future__ import annotations

import json
import timeit
from typing import Any

import msgspec
import orjson
import pydantic

LINE = (
    b'{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"echo",'
    b'"arguments":{"text":"hello world"},"_meta":{"progressToken":17}}}'
)
RESULT = {"jsonrpc": "2.0", "id": 17, "result": {"content": [{"type": "text", "text": "hello world"}]}}
PARAMS = orjson.loads(LINE)["params"]


class ParamsStruct(msgspec.Struct, omit_defaults=True):
    name: str
    arguments: dict[str, Any] | None = None


class ParamsModel(pydantic.BaseModel):
    name: str
    arguments: dict[str, Any] | None = None


def best(fn: Any, number: int = 200_000) -> float:
    return min(timeit.repeat(fn, number=number, repeat=3)) / number * 1e6


def main() -> None:
    decoder = msgspec.json.Decoder()
    encoder = msgspec.json.Encoder()
    rows = [
        ("decode", "json", best(lambda: json.loads(LINE))),
        ("decode", "orjson", best(lambda: orjson.loads(LINE))),
        ("decode", "msgspec", best(lambda: decoder.decode(LINE))),
        ("encode", "json", best(lambda: json.dumps(RESULT, separators=(",", ":")))),
        ("encode", "orjson", best(lambda: orjson.dumps(RESULT))),
        ("encode", "msgspec", best(lambda: encoder.encode(RESULT))),
        ("validate params", "pydantic", best(lambda: ParamsModel.model_validate(PARAMS))),
        ("validate params", "msgspec", best(lambda: msgspec.convert(PARAMS, ParamsStruct))),
    ]
    print("| step | library | µs per message |\n|---|---|---|")
    for step, library, micros in rows:
        print(f"| {step} | {library} | {micros:.2f} |")


if __name__ == "__main__":
    main()
