"""A practice set as Markdown (issue 31, item 3): the document
`GET /api/practice/sets/{id}/export.md` streams, readable in Obsidian and on GitHub as it is.

Shape, in order:

- YAML front matter: title, set id, created, updated, the three levels by name, status;
- `# <title>`, the levels line, the learner's note (quoted) when there is one, and a one-line
  summary (answered, graded, mean score);
- `## Problem i: <title>` per problem, in order: the reasoning it exercises (its chains as
  `A ∧ B ⟹ C` in proposition names), the statement, `### Your answer`, `### Grade` (`**s/10**`
  and the grader's comment, or where the grading stands), and — once the problem is answered —
  `### Model solution` and `### Rubric`;
- `## Propositions`: each proposition of the set, name and statement.

A problem not answered yet shows neither its solution nor its rubric, exactly as the exam page and
`GET /api/practice/sets/{id}` do (`ProblemSet.view`): exporting a set does not spend its one
attempt per problem (decision 0038). Math stays `$…$` source.
"""

from __future__ import annotations

from collections.abc import Iterator

from server.core.contracts.practice import PracticeChain, Problem, ProblemSet
from server.core.markdown import block, front_matter, one_line, quoted
from server.core.practice.levels import level_names

GRADE_WORDS = {
    "none": "*Not graded yet.*",
    "grading": "*Being graded.*",
    "interrupted": "*The grading was interrupted; the answer stands.*",
    "error": "*The grading failed; the answer stands.*",
}


def set_markdown(problem_set: ProblemSet) -> Iterator[str]:
    """The set as Markdown, in pieces: the head, one per problem, the propositions. Never raises
    for a problem's content (a problem still pending or failed says so)."""
    rung, cue, presentation = level_names(problem_set.params)
    yield front_matter(
        {
            "title": problem_set.title,
            "set": problem_set.id,
            "created": problem_set.created_at,
            "updated": problem_set.updated_at,
            "rung": rung,
            "cue": cue,
            "presentation": presentation,
            "status": problem_set.status,
        }
    )
    head = f"# {one_line(problem_set.title) or 'Untitled set'}\n\n*{rung} · {cue} · {presentation}*\n\n"
    if problem_set.note.strip():
        head += "Your note to the problem writers:\n\n" + quoted(problem_set.note)
    if problem_set.status == "error":
        head += f"*This set failed: {one_line(problem_set.error or 'no reason given')}*\n\n"
    head += summary_line(problem_set) + "\n\n"
    yield head
    names = {p.id: p.name for p in problem_set.propositions}
    chains = {c.id: c for c in problem_set.chains}
    for problem in problem_set.problems:
        yield problem_markdown(problem, [chains[i] for i in problem.chain_ids if i in chains], names)
    yield "## Propositions\n\n"
    if not problem_set.propositions:
        yield "*None.*\n"
    for proposition in problem_set.propositions:
        yield f"- **{one_line(proposition.name)}**: {one_line(proposition.statement)}\n"


def summary_line(problem_set: ProblemSet) -> str:
    """`N problems · A answered · G graded · mean score m/10` (the mean only when something is
    graded)."""
    problems = problem_set.problems
    answered = sum(p.answer is not None for p in problems)
    scores = [p.grade.score for p in problems if p.grade is not None]
    plural = "" if len(problems) == 1 else "s"
    line = f"{len(problems)} problem{plural} · {answered} answered · {len(scores)} graded"
    if scores:
        line += f" · mean score {sum(scores) / len(scores):.1f}/10"
    return line


def chain_line(chain: PracticeChain, names: dict[str, str]) -> str:
    """`A ∧ B ⟹ C` in proposition names (a singleton: its name alone)."""

    def name(node: str) -> str:
        return one_line(names.get(node, node))

    if not chain.premises:
        return name(chain.conclusion)
    return " ∧ ".join(name(p) for p in chain.premises) + " ⟹ " + name(chain.conclusion)


def problem_markdown(problem: Problem, chains: list[PracticeChain], names: dict[str, str]) -> str:
    """One problem's section (see the module docstring)."""
    title = one_line(problem.title) or "Untitled problem"
    out = f"## Problem {problem.index + 1}: {title}\n\n"
    if chains:
        out += "Exercises: " + "; ".join(chain_line(c, names) for c in chains) + "\n\n"
    if problem.statement is None:
        if problem.status == "error":
            return (
                out
                + f"*This problem could not be written: {one_line(problem.error or 'no reason given')}*\n\n"
            )
        return out + "*Not written yet.*\n\n"
    out += block(problem.statement)
    out += "### Your answer\n\n"
    if problem.answer is None:
        return out + "*Not answered yet (the model solution shows once you answer).*\n\n"
    out += block(problem.answer) or "*(empty)*\n\n"
    out += "### Grade\n\n"
    if problem.grade is not None:
        out += f"**{problem.grade.score}/10**: {one_line(problem.grade.comment)}\n\n"
    else:
        out += GRADE_WORDS.get(problem.grade_status, GRADE_WORDS["none"]) + "\n\n"
    if problem.solution:
        out += "### Model solution\n\n" + block(problem.solution)
    if problem.rubric:
        out += "### Rubric\n\n" + block(problem.rubric)
    return out
