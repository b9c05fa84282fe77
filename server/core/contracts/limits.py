"""Length limits checked by validators instead of JSON-schema `maxLength`.

Model-facing tool schemas stay lean: llama.cpp turns a `maxLength` of thousands into a grammar
too large to compile (the offline model's server then fails), and no provider needs the bound
to produce good arguments. The limit still holds: a value over it is refused with a message
the model can act on.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field


def limited(maximum: int) -> AfterValidator:
    """A validator: non-blank, at most `maximum` characters."""

    def check(value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        if len(value) > maximum:
            raise ValueError(f"is {len(value)} characters; at most {maximum} are allowed")
        return value

    return AfterValidator(check)


Text200 = Annotated[str, Field(min_length=1), limited(200)]
Text300 = Annotated[str, Field(min_length=1), limited(300)]
Text1000 = Annotated[str, Field(min_length=1), limited(1000)]
Text2000 = Annotated[str, Field(min_length=1), limited(2000)]
Text4000 = Annotated[str, Field(min_length=1), limited(4000)]
Text8000 = Annotated[str, Field(min_length=1), limited(8000)]
