import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { draftOf, keepDraft } from '../questionDrafts';
import { askInputOrNull, displayOrder, gradeQuiz, quizInputOrNull, type AskInput, type AskResult, type QuizInput, type QuizResult } from '../core/questions';
import type { PendingQuestion } from '../core/transcript';
import Markdown from './Markdown';

export interface Verdict {
  toolCallId: string;
  quiz: QuizInput;
  result: QuizResult;
}

interface Props {
  pending: PendingQuestion[];
  /** Recorded answers by toolCallId (see answersById). */
  answers: Map<string, unknown>;
  busy: boolean;
  onAnswer: (tool: 'quiz' | 'ask_user_question', toolCallId: string, output: QuizResult | AskResult) => void;
}

/** "A", "B", ... for the options as shown. */
export function optionLetter(position: number): string {
  return String.fromCharCode(65 + position);
}

/**
 * The question dock: the pending question(s) of the last assistant message,
 * rendered above the composer as the primary action. After "Check", the
 * verdict stays here (until dismissed or the next answer) while the tutor
 * continues.
 */
export default function QuestionDock({ pending, answers, busy, onAnswer }: Props) {
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  // True from "Check" until the reply it starts has ended.
  const [awaiting, setAwaiting] = useState(false);
  const wasBusy = useRef(busy);
  useEffect(() => {
    if (wasBusy.current && !busy) setAwaiting(false);
    wasBusy.current = busy;
  }, [busy]);

  // The local verdict stays while its reply runs or above the next question
  // (the transcript's quiz card keeps it for good), and only while the
  // transcript holds that very answer: a refused (bad_answer) or superseded
  // (not_pending) answer drops it.
  const recorded = verdict ? answers.get(verdict.toolCallId) : undefined;
  const matches =
    !!verdict && typeof recorded === 'object' && recorded !== null && (recorded as { chosen?: unknown }).chosen === verdict.result.chosen;
  const shown = matches && (awaiting || busy || pending.length > 0) ? verdict : null;

  if (pending.length === 0 && !shown) return null;

  return (
    <section className="dock" data-testid="question-dock" aria-label="Question from your tutor">
      {shown && <VerdictView verdict={shown} onDismiss={() => setVerdict(null)} />}
      {pending.map((q) => {
        if (q.tool === 'quiz') {
          const quiz = quizInputOrNull(q.part.input);
          if (!quiz) return <BrokenQuestion key={q.part.toolCallId} />;
          return (
            <QuizQuestion
              key={q.part.toolCallId}
              toolCallId={q.part.toolCallId}
              quiz={quiz}
              busy={busy}
              onCheck={(result) => {
                setVerdict({ toolCallId: q.part.toolCallId, quiz, result });
                setAwaiting(true);
                onAnswer('quiz', q.part.toolCallId, result);
              }}
            />
          );
        }
        const ask = askInputOrNull(q.part.input);
        if (!ask) return <BrokenQuestion key={q.part.toolCallId} />;
        return (
          <AskQuestion
            key={q.part.toolCallId}
            toolCallId={q.part.toolCallId}
            ask={ask}
            busy={busy}
            onSend={(output) => {
              setVerdict(null);
              onAnswer('ask_user_question', q.part.toolCallId, output);
            }}
          />
        );
      })}
    </section>
  );
}

function BrokenQuestion() {
  return <p className="dock-broken muted small">The tutor asked a question this page cannot show. Type your reply below instead.</p>;
}

function VerdictView({ verdict, onDismiss }: { verdict: Verdict; onDismiss: () => void }) {
  const { result, quiz } = verdict;
  return (
    <div className={result.correct ? 'dock-verdict right' : 'dock-verdict wrong'} data-testid="dock-verdict" data-correct={String(result.correct)} role="status">
      <div className="dock-verdict-head">
        <strong>{result.correct ? '✓ Correct' : '✗ Not quite'}</strong>
        {!result.correct && (
          <span className="dock-verdict-answer">
            The answer is <Markdown text={result.correctText} inline />
          </span>
        )}
        <button type="button" className="icon-btn" aria-label="Dismiss" title="Dismiss" onClick={onDismiss}>
          ×
        </button>
      </div>
      <div className="dock-explanation">
        <Markdown text={quiz.explanation} />
      </div>
    </div>
  );
}

function QuizQuestion({
  toolCallId,
  quiz,
  busy,
  onCheck,
}: {
  toolCallId: string;
  quiz: QuizInput;
  busy: boolean;
  onCheck: (result: QuizResult) => void;
}) {
  const order = useMemo(() => displayOrder(toolCallId, quiz.options.length), [toolCallId, quiz.options.length]);
  const [chosen, setChosenState] = useState<number | null>(() => draftOf(toolCallId).chosen ?? null);
  const setChosen = (value: number | null) => {
    setChosenState(value);
    keepDraft(toolCallId, { chosen: value });
  };
  const ref = useRef<HTMLDivElement>(null);

  useEffect(() => {
    ref.current?.querySelector<HTMLButtonElement>('button')?.focus({ preventScroll: true });
  }, []);

  function check() {
    if (chosen === null || busy) return;
    onCheck(gradeQuiz(quiz, chosen));
  }

  function onKeyDown(e: KeyboardEvent<HTMLDivElement>) {
    const n = Number.parseInt(e.key, 10);
    if (n >= 1 && n <= order.length) setChosen(order[n - 1]);
    else if (e.key === 'Enter' && chosen !== null && (e.target as HTMLElement).tagName !== 'BUTTON') check();
  }

  return (
    <div className="dock-question" data-testid="dock-quiz" data-tool-call-id={toolCallId} onKeyDown={onKeyDown} ref={ref}>
      <div className="dock-kind">Quiz</div>
      <div className="dock-prompt">
        <Markdown text={quiz.question} />
      </div>
      <div className="dock-options" role="radiogroup" aria-label="Options">
        {order.map((authored, position) => (
          <button
            key={authored}
            type="button"
            role="radio"
            aria-checked={chosen === authored}
            className={chosen === authored ? 'dock-option selected' : 'dock-option'}
            data-testid="dock-option"
            data-authored-index={authored}
            onClick={() => setChosen(authored)}
          >
            <span className="option-letter">{optionLetter(position)}</span>
            <Markdown text={quiz.options[authored]} inline />
          </button>
        ))}
      </div>
      <div className="dock-actions">
        <button type="button" className="btn btn-primary" data-testid="dock-submit" disabled={chosen === null || busy} onClick={check}>
          Check
        </button>
        <span className="muted small">{busy ? 'Wait for the tutor to finish…' : 'Pick an answer, then check it.'}</span>
      </div>
    </div>
  );
}

function AskQuestion({
  toolCallId,
  ask,
  busy,
  onSend,
}: {
  toolCallId: string;
  ask: AskInput;
  busy: boolean;
  onSend: (output: AskResult) => void;
}) {
  const [text, setTextState] = useState(() => draftOf(toolCallId).text ?? '');
  const setText = (value: string) => {
    setTextState(value);
    keepDraft(toolCallId, { text: value });
  };
  const ref = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    ref.current?.focus({ preventScroll: true });
  }, []);

  function sendText() {
    const answer = text.trim();
    if (!answer || busy) return;
    onSend({ kind: 'answer', answer, chosen: null });
  }

  return (
    <div className="dock-question" data-testid="dock-ask">
      <div className="dock-kind">Question</div>
      <div className="dock-prompt">
        <Markdown text={ask.question} />
      </div>
      {ask.options.length > 0 && (
        <div className="dock-suggestions">
          {ask.options.map((option, i) => (
            <button
              key={i}
              type="button"
              className="dock-option suggestion"
              data-testid="dock-option"
              data-authored-index={i}
              disabled={busy || !option.trim()}
              onClick={() => onSend({ kind: 'answer', answer: option.trim(), chosen: i })}
            >
              <Markdown text={option} inline />
            </button>
          ))}
        </div>
      )}
      <form
        className="dock-answer"
        onSubmit={(e) => {
          e.preventDefault();
          sendText();
        }}
      >
        <textarea
          ref={ref}
          rows={1}
          data-testid="dock-answer-input"
          aria-label="Your answer"
          placeholder={ask.options.length ? 'Or write your own answer…' : 'Your answer…'}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              sendText();
            }
          }}
        />
        <button type="submit" className="btn btn-primary" data-testid="dock-send-answer" disabled={busy || !text.trim()}>
          Answer
        </button>
      </form>
    </div>
  );
}
