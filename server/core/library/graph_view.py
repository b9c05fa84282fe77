"""The graph's read channel: a pure derivation of what the home page shows (seed §6, §7), in
three modules re-exported here (the one import path): `view_derive` (the rows: propositions,
implication nodes, clusters, folders; deletion's closure), `view_rows` (the full view as bytes,
patched row by row) and `view_compact` (the compact form and its deltas).
"""

from server.core.library.view_compact import COMPACT_FORMAT as COMPACT_FORMAT
from server.core.library.view_compact import CompactRows as CompactRows
from server.core.library.view_compact import compact_bytes as compact_bytes
from server.core.library.view_compact import compact_delta as compact_delta
from server.core.library.view_derive import AND as AND
from server.core.library.view_derive import IMPLIES as IMPLIES
from server.core.library.view_derive import birth_partition as birth_partition
from server.core.library.view_derive import chain_line as chain_line
from server.core.library.view_derive import clusters as clusters
from server.core.library.view_derive import deletion as deletion
from server.core.library.view_derive import derive_view as derive_view
from server.core.library.view_derive import live_chains as live_chains
from server.core.library.view_rows import Inputs as Inputs
from server.core.library.view_rows import Spans as Spans
from server.core.library.view_rows import ViewRows as ViewRows
from server.core.library.view_rows import view_bytes as view_bytes
