"""The scripted lesson: plays the prober, the teacher and the namer by reading the request.

Prober: quiz -> (answer) -> ask the goal -> (answer) -> probe_done.
Teacher: a cyclic plan first (refused), then a good plan -> a tagged teaching quiz -> (answer) ->
`CLOSING`. Namer (the naming side channel, server/agent/prompts/namer.md): `LESSON_TITLE`.
Each step is chosen from the tool results the request's history already holds, like a real model.

Served in-process as `lesson_model` (a `FunctionModel` stream function) and over HTTP as
`lesson_reply` (for `tests/stub_openai.py: create_stub`).
"""

from __future__ import annotations

from tests.scripts.serving import Ask, Reply, over_http, streamed

PROBE_QUIZ = {
    "question": "What is $2+2$?",
    "options": ["3", "4", "5"],
    "correct": 1,
    "explanation": "Two and two make four.",
}
GOAL = {"question": "What do you want to learn?", "options": ["Derivatives", "Integrals"]}
ASSESSMENT = {
    "topic": "derivatives",
    "goal": "understand derivatives",
    "floor": "arithmetic",
    "ceiling": "limits",
    "level": "beginner",
}
BAD_PLAN = {"title": "Derivatives", "mermaid": "graph TD\n a[Limits] --> b[Derivative]\n b --> a"}
GOOD_PLAN = {
    "title": "Derivatives",
    "mermaid": "graph TD\n limits[Limits] --> deriv[Derivative]\n deriv --> power[Power rule]",
}
TEACH_QUIZ = {
    "question": "The derivative of $x^2$?",
    "options": ["$x$", "$2x$", "$x^2$"],
    "correct": 1,
    "explanation": "Power rule: $2x$.",
    "node": "deriv",
}
CLOSING = "Well done. Next: the power rule."
"""The teacher's last words, once the teaching quiz is answered."""
LESSON_TITLE = "Derivatives from limits"
"""What the scripted model answers the naming side channel (server/agent/prompts/namer.md)."""
NAMER_MARK = "You name lessons"


def lesson(ask: Ask) -> Reply:
    """The next step of the lesson for what `ask` shows."""
    if NAMER_MARK in ask.instructions:  # the naming side channel
        return Reply(LESSON_TITLE)
    if "probe_done" in ask.tools:  # the prober
        if not ask.answered("quiz"):
            return Reply("Let's see where you stand.", ("quiz", PROBE_QUIZ, "call_probe_quiz"))
        if not ask.answered("ask_user_question"):
            return Reply("", ("ask_user_question", GOAL, "call_goal"))
        return Reply("", ("probe_done", ASSESSMENT, "call_probe_done"))
    if not ask.answered("plan_init"):  # the teacher: a plan, the cyclic one first
        if ask.sent_back("plan_init"):
            return Reply("", ("plan_init", GOOD_PLAN, "call_plan_good"))
        return Reply("", ("plan_init", BAD_PLAN, "call_plan_bad"))
    quizzes = ask.answers("quiz")  # the probe's and the teacher's
    if len(quizzes) < 2 or quizzes[-1] == "":
        return Reply(
            "The derivative measures how fast a function changes.", ("quiz", TEACH_QUIZ, "call_teach_quiz")
        )
    return Reply(CLOSING)


lesson_model = streamed(lesson)
"""The lesson in-process: `FunctionModel(stream_function=lesson_model)`."""
lesson_reply = over_http(lesson)
"""The lesson over HTTP: `create_stub(lesson_reply)`."""
