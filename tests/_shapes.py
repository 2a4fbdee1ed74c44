"""Argument and return types the server API tests share: one of each kind the signature
reader knows (a dataclass, a TypedDict, a pydantic model)."""

from __future__ import annotations

__all__ = ["Order", "Person", "Point"]

import dataclasses

from pydantic import BaseModel
from typing_extensions import TypedDict


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


class Person(TypedDict):
    name: str
    age: int


class Order(BaseModel):
    item: str
    quantity: int = 1
