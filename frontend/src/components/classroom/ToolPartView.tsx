import './toolPartView.css';
import { parseAssessment } from '../../core/classroom/phases';
import { parsePlan } from '../../core/classroom/plan';
import { askInputOrNull, displayOrder, quizInputOrNull, type QuizInput } from '../../core/classroom/questions';
import { toolNameOf, type ToolPart } from '../../core/toolParts';
import Markdown from '../Markdown';
import MathText from '../MathText';
import { optionLetter } from './QuestionDock';
import DispatchCard from '../workbench/DispatchCard';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One tool part of an assistant message, in the transcript. */
export default function ToolPartView({ part, pending }: { part: ToolPart; pending: boolean }) {
  const name = toolNameOf(part) ?? 'unknown';
  switch (name) {
    case 'quiz':
      return <QuizPart part={part} pending={pending} />;
    case 'ask_user_question':
      return <AskPart part={part} pending={pending} />;
    case 'probe_done':
      return <ProbePart part={part} />;
    case 'plan_init':
      return <PlanPart part={part} />;
    case 'plan_teach':
      // The teacher naming the plan node it teaches: the plan panel shows it (derived statuses).
      return null;
    case 'research':
    case 'demo':
    case 'visual':
      return <DispatchCard kind={name} part={part} />;
    default:
      return <GenericTool name={name} part={part} />;
  }
}

/** A question the teacher drafted and the app sent back (its options were not words, its input
 * did not fit): the error text is written for the model ("… Call the tool again with fixed
 * options."), so the learner reads only this line (issue 29 items 3 and 4; a trial read the
 * model's instructions and raw `&#39;` in the lesson). */
function DraftRefused({ what }: { what: string }) {
  return (
    <div className="tool-note" data-testid="draft-refused">
      A draft {what} was sent back; the teacher is writing it again.
    </div>
  );
}

/** Whether a tool's error text is an instruction to the model ("… call plan_init again", "Call
 * the tool again …", "call list_sessions for the ids"), never to be shown to the learner. */
export function speaksToModel(text: string): boolean {
  return /\bcall (the tool|[a-z_]+) (again|for|first)\b/i.test(text);
}

function GenericTool({ name, part }: { name: string; part: ToolPart }) {
  if (part.state === 'output-error' && speaksToModel(part.errorText ?? '')) {
    return (
      <div className="tool-note" data-testid="tool-note" data-tool={name} data-state={part.state}>
        One of the model&apos;s steps was sent back; it is trying again.
      </div>
    );
  }
  if (part.state === 'output-error') {
    return (
      <div className="tool-note tool-error" data-testid="tool-note" data-tool={name} data-state={part.state}>
        {/* plain words: a new-user trial read "tool call failed … (quiz)" as jargon; the model is told
            the reason and may try again, as it did there */}
        One of the model&apos;s steps did not work ({part.errorText || 'no reason given'}); it may try again.
      </div>
    );
  }
  return (
    <div className="tool-note" data-testid="tool-note" data-tool={name} data-state={part.state}>
      <span className="tool-name">{name}</span> · {stateLabel(part.state)}
    </div>
  );
}

function stateLabel(state: string): string {
  switch (state) {
    case 'input-streaming':
      return 'being called…';
    case 'input-available':
      return 'called';
    case 'output-available':
      return 'done';
    default:
      return state;
  }
}

// ---------------------------------------------------------------------------
// Questions

/** A question still waiting for its answer: it shows once, in the dock (issue 18); here only a reference to it. */
function PendingRef({ kind, testId }: { kind: string; testId: string }) {
  return (
    <p className="qcard-ref" data-testid={testId}>
      <span className="qcard-kind">{kind}</span> waiting for your answer below ↓
    </p>
  );
}

function QuizPart({ part, pending }: { part: ToolPart; pending: boolean }) {
  if (part.state === 'input-streaming') return <div className="tool-note">Writing a question…</div>;
  if (part.state === 'output-error') return <DraftRefused what="question" />;
  const quiz = quizInputOrNull(part.input);
  if (!quiz) return <GenericTool name="quiz" part={part} />;
  if (part.state === 'output-available') return <AnsweredQuiz part={part} quiz={quiz} />;
  if (pending) return <PendingRef kind="Quiz" testId="quiz-pending" />;
  return (
    <div className="qcard qcard-skipped" data-testid="quiz-skipped">
      <div className="qcard-kind">Quiz · not answered</div>
      <Markdown text={quiz.question} />
    </div>
  );
}

function AnsweredQuiz({ part, quiz }: { part: ToolPart; quiz: QuizInput }) {
  const output = isRecord(part.output) ? part.output : {};
  const chosen = typeof output.chosen === 'number' ? output.chosen : null;
  const correctIndex = typeof output.correctIndex === 'number' ? output.correctIndex : quiz.correct;
  const right = chosen !== null && chosen === correctIndex;
  const order = displayOrder(part.toolCallId, quiz.options.length);
  if (chosen === null) {
    // e.g. the server's INTERRUPTED marker: the learner moved on
    return (
      <div className="qcard qcard-skipped" data-testid="quiz-skipped">
        <div className="qcard-kind">Quiz · not answered</div>
        <Markdown text={quiz.question} />
      </div>
    );
  }
  return (
    <div className={right ? 'qcard qcard-right' : 'qcard qcard-wrong'} data-testid="quiz-card" data-correct={String(right)}>
      <div className="qcard-kind">
        Quiz · <strong>{right ? '✓ correct' : '✗ not quite'}</strong>
      </div>
      <Markdown text={quiz.question} />
      <ol className="qcard-options">
        {order.map((authored, position) => {
          const isChosen = authored === chosen;
          const isCorrect = authored === correctIndex;
          const cls = ['qcard-option', isChosen ? 'chosen' : '', isCorrect ? 'correct' : ''].filter(Boolean).join(' ');
          return (
            <li key={authored} className={cls} data-authored-index={authored}>
              <span className="option-letter">{optionLetter(position)}</span>
              <Markdown text={quiz.options[authored]} inline />
              {isChosen && <span className="qcard-tag">your answer</span>}
              {isCorrect && !isChosen && <span className="qcard-tag">correct</span>}
            </li>
          );
        })}
      </ol>
      <div className="qcard-explanation">
        <Markdown text={quiz.explanation} />
      </div>
    </div>
  );
}

function AskPart({ part, pending }: { part: ToolPart; pending: boolean }) {
  if (part.state === 'input-streaming') return <div className="tool-note">Writing a question…</div>;
  if (part.state === 'output-error') return <DraftRefused what="question" />;
  const ask = askInputOrNull(part.input);
  if (!ask) return <GenericTool name="ask_user_question" part={part} />;
  const output = isRecord(part.output) ? part.output : null;
  const answer = output && typeof output.answer === 'string' ? output.answer : null;
  if (part.state === 'output-available' && answer !== null) {
    return (
      <div className="qcard qcard-ask" data-testid="ask-card">
        <Markdown text={ask.question} />
        <p className="ask-answer">
          <span className="muted">Your answer:</span> <MathText text={answer} />
        </p>
      </div>
    );
  }
  if (pending) return <PendingRef kind="Question" testId="ask-pending" />;
  return (
    <div className="qcard qcard-skipped" data-testid="ask-skipped">
      <Markdown text={ask.question} />
      <p className="muted small">Not answered.</p>
    </div>
  );
}

// ---------------------------------------------------------------------------
// The prober's hand-over and the plan

function ProbePart({ part }: { part: ToolPart }) {
  if (part.state === 'input-streaming' || part.state === 'input-available') {
    return <div className="tool-note">Summing up what you know…</div>;
  }
  const assessment = part.state === 'output-available' ? parseAssessment(part.input) : null;
  if (!assessment) return <GenericTool name="probe_done" part={part} />;
  return (
    <div className="assessment" data-testid="assessment-card">
      <div className="assessment-head">
        <strong>Assessment</strong>
        <span className="level-pill" data-level={assessment.level}>
          {assessment.level}
        </span>
      </div>
      <dl>
        <dt>Topic</dt>
        <dd>
          <MathText text={assessment.topic} />
        </dd>
        <dt>Goal</dt>
        <dd>
          <MathText text={assessment.goal} />
        </dd>
        <dt>You know</dt>
        <dd>
          <MathText text={assessment.floor} />
        </dd>
        <dt>Next edge</dt>
        <dd>
          <MathText text={assessment.ceiling} />
        </dd>
      </dl>
      <p className="assessment-foot">The teacher takes over from here.</p>
    </div>
  );
}

function PlanPart({ part }: { part: ToolPart }) {
  if (part.state === 'input-streaming' || part.state === 'input-available') {
    return <div className="tool-note">Writing the lesson plan…</div>;
  }
  if (part.state === 'output-error') {
    // The error text is written for the model ("plan_init failed: … call plan_init again."): the
    // learner gets the friendly line only; the model still reads the full text on its own channel.
    return (
      <div className="tool-note" data-testid="plan-refused">
        A draft plan was refused; the teacher is revising it.
      </div>
    );
  }
  const plan = isRecord(part.output) ? parsePlan(part.output.plan) : null;
  if (!plan) return <GenericTool name="plan_init" part={part} />;
  return (
    <div className="plan-note" data-testid="plan-note">
      Lesson plan written:{' '}
      <strong>
        <MathText text={plan.title} />
      </strong> · {plan.nodes.length} step
      {plan.nodes.length === 1 ? '' : 's'} <span className="muted">(see the plan panel)</span>
    </div>
  );
}
