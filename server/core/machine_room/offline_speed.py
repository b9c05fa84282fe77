"""How fast the offline demo model answers on this machine, and the wait that makes (issue 29,
item 3; pure).

Each turn the offline model finishes well is one sample: the tokens it wrote and the seconds the
turn took, start to end (its start-up, reading the lesson and writing: what the learner waits
for). The speed is an exponentially weighted mean of the samples' tokens per second, and so is
the size of a reply; the expected wait of the next reply is that size at that speed.
"""

from __future__ import annotations

from dataclasses import dataclass

WEIGHT = 0.3
"""How much the newest sample counts (0-1): a few turns follow a machine that got busier."""


@dataclass(frozen=True)
class OfflineSpeed:
    """The measured speed; `samples == 0` before the first turn.

    Attributes:
        tokens_per_s: tokens written per second of a turn (weighted mean), None before any sample.
        reply_tokens: tokens in a reply (weighted mean), None before any sample.
        samples: turns measured (since the server started).
    """

    tokens_per_s: float | None = None
    reply_tokens: float | None = None
    samples: int = 0

    def measured(self, tokens: int, seconds: float) -> OfflineSpeed:
        """This speed with one more turn of `tokens` output tokens in `seconds`; unchanged when
        either is not positive (a turn that wrote nothing measures no speed)."""
        if tokens <= 0 or seconds <= 0:
            return self
        rate = tokens / seconds
        if self.tokens_per_s is None or self.reply_tokens is None:
            return OfflineSpeed(rate, float(tokens), 1)
        return OfflineSpeed(
            (1 - WEIGHT) * self.tokens_per_s + WEIGHT * rate,
            (1 - WEIGHT) * self.reply_tokens + WEIGHT * tokens,
            self.samples + 1,
        )

    @property
    def expected_wait_s(self) -> float | None:
        """Seconds the next reply is expected to take (a reply's tokens at the measured speed),
        None before any sample."""
        if self.tokens_per_s is None or self.reply_tokens is None:
            return None
        return self.reply_tokens / self.tokens_per_s
