"""Practice's model stages (seed §7): the partitioner (`partitioner.py`), one generator per
problem (`generator.py`), one grader per answer (`grader.py`). Each submits through one validated
`submit` tool (the shapes in `submits.py`); a refused submit goes back to the model with the
reasons (at most 4 turns in all). `texts.py` renders a set's chains and propositions for them."""
