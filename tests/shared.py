"""Where the team's shared fixtures live (`../shared/fixtures/`, beside this repository).

They are real inputs written by others and are used in place, never copied into the project.
Looked up in order: `$LH_SHARED_DIR`, `../shared` beside the checkout, then `shared/` beside any
parent folder of the checkout, then `/work/shared` (where CI machines keep it).
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _find() -> Path:
    candidates = []
    if os.environ.get("LH_SHARED_DIR"):
        candidates.append(Path(os.environ["LH_SHARED_DIR"]))
    candidates += [parent / "shared" for parent in ROOT.parents]
    candidates.append(Path("/work/shared"))
    for candidate in candidates:
        if (candidate / "fixtures" / "notes").is_dir():
            return candidate
    raise RuntimeError(
        "the shared fixtures were not found (looked for shared/fixtures/notes beside the checkout and "
        "in /work/shared); set LH_SHARED_DIR to the folder that holds fixtures/"
    )


SHARED = _find()
NOTES = SHARED / "fixtures" / "notes"
