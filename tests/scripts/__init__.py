"""The scripted models, each written once and served two ways (`serving.py`).

One module per system: `classroom.py` (the prober, teacher and namer of a lesson), `library.py`
(the extractor and auditor), `practice.py` (the partitioner, generator and grader). A script is a
function of what the request shows (`serving.Ask`) returning what the model says
(`serving.Reply`). In-process (flows, unit, store tests) it is a pydantic-ai `FunctionModel`
function: `whole(script)`, `streamed(script)`; over HTTP (`python -m server`, e2e, benches) it is
the reply of the OpenAI-compatible stub `tests/stub_openai.py: create_stub`: `over_http(script)`.
Each module exports both servings under the names its callers use (`lesson_model` /
`lesson_reply`, `graph_model` / `graph_reply`, `PracticeScript` / `practice_reply`).
"""
