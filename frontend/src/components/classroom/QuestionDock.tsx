import './questionDock.css';
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { draftOf, keepDraft } from './questionDrafts';
import { askInputOrNull, displayOrder, gradeQuiz, quizInputOrNull, type AskInput, type AskResult, type QuizInput, type QuizResult } from '../../core/classroom/questions';
import { plainMath } from '../../core/math';
import type { PendingQuestion } from '../../core/classroom/transcript';
import Markdown from '../Markdown';

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
  /** Called when an answer left no question to focus: the page focuses its message box. */
  onHandOff?: () => void;
}

/** "A", "B", ... for the options as shown. */
export function optionLetter(position: number): string {
  return String.fromCharCode(65 + position);
}

/**
 * The question dock: the pending question(s) of the last assistant message, above the composer as
 * the primary action (issue 18). One column of options; the dock's height is capped (CSS: at most
 * 40 % of the viewport) with Check always in view, so it never hides the prose it asks about.
 * While the learner reads (a click or focus outside the dock) it collapses to a slim bar; focusing
 * the bar expands it again. After "Check" the verdict shows here only until that reply ends and never
 * above the next question (the transcript's quiz card keeps it for good).
 */
export default function QuestionDock({ pending, answers, busy, onAnswer, onHandOff }: Props) {
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  // True from "Check" until the reply it starts has ended.
  const [awaiting, setAwaiting] = useState(false);
  const wasBusy = useRef(busy);
  useEffect(() => {
    if (wasBusy.current && !busy) {
      setAwaiting(false);
      setVerdict(null); // every question starts clean: a verdict never outlives its reply
    }
    wasBusy.current = busy;
  }, [busy]);

  // The collapsed state belongs to one question: a new question starts expanded.
  const pendingKey = pending.map((q) => q.part.toolCallId).join(' ');
  const [collapsedFor, setCollapsedFor] = useState<string | null>(null);
  const collapsed = pendingKey !== '' && collapsedFor === pendingKey;
  const sectionRef = useRef<HTMLElement>(null);
  const focusOnExpand = useRef(false);

  // Reading the prose (a click or tap anywhere outside the dock) collapses it to the slim bar.
  useEffect(() => {
    if (!pendingKey) return;
    const onPointerDown = (e: PointerEvent) => {
      const section = sectionRef.current;
      if (section && e.target instanceof Node && !section.contains(e.target)) setCollapsedFor(pendingKey);
    };
    document.addEventListener('pointerdown', onPointerDown);
    return () => document.removeEventListener('pointerdown', onPointerDown);
  }, [pendingKey]);

  // Expanding from the bar hands the focus on to the question (its chosen or first option, or its answer box).
  useEffect(() => {
    if (collapsed || !focusOnExpand.current) return;
    focusOnExpand.current = false;
    const section = sectionRef.current;
    const target =
      section?.querySelector<HTMLElement>('[role="radio"][tabindex="0"]') ?? section?.querySelector<HTMLElement>('textarea, button:not(:disabled)');
    target?.focus({ preventScroll: true });
  }, [collapsed]);

  // An answer removes its question, and with it the focused control: hand the focus on to the next
  // question waiting here, else to the message box, never to the page body (issue 29).
  const handOff = useRef(false);
  useEffect(() => {
    if (!handOff.current) return;
    handOff.current = false;
    const active = document.activeElement;
    if (active && active !== document.body && active.isConnected) return; // the learner moved on already
    const next = sectionRef.current?.querySelector<HTMLElement>('[role="radio"][tabindex="0"], textarea');
    if (next) next.focus({ preventScroll: true });
    else onHandOff?.();
  }, [pendingKey, onHandOff]);

  // The local verdict shows from "Check" until its reply ends, only while no other question waits
  // and only while the transcript holds that very answer: a refused (bad_answer) or superseded
  // (not_pending) answer drops it.
  const recorded = verdict ? answers.get(verdict.toolCallId) : undefined;
  const matches =
    !!verdict && typeof recorded === 'object' && recorded !== null && (recorded as { chosen?: unknown }).chosen === verdict.result.chosen;
  const shown = matches && awaiting && pending.length === 0 ? verdict : null;

  if (pending.length === 0 && !shown) return null;

  const first = pending[0];
  const firstText = first ? questionTextOf(first.tool, first.part.input) : '';

  return (
    <section
      ref={sectionRef}
      className={collapsed ? 'dock collapsed' : 'dock'}
      data-testid="question-dock"
      data-collapsed={String(collapsed)}
      aria-label="Question from your tutor"
      onFocus={() => {
        if (collapsed) {
          focusOnExpand.current = true;
          setCollapsedFor(null);
        }
      }}
      onBlur={(e) => {
        // focus moved to something else on the page (the composer, the sidebar): collapse
        const next = e.relatedTarget;
        if (pendingKey && next instanceof Node && !e.currentTarget.contains(next)) setCollapsedFor(pendingKey);
      }}
    >
      {collapsed ? (
        <button type="button" className="dock-bar" data-testid="dock-bar" aria-expanded="false" onClick={() => setCollapsedFor(null)}>
          <span className="dock-kind">{first?.tool === 'quiz' ? 'Quiz' : 'Question'}</span>
          <span className="dock-bar-text">
            <Markdown text={firstText} inline />
          </span>
          <span className="dock-bar-hint">Answer ▴</span>
        </button>
      ) : (
        <>
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
                    handOff.current = true;
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
                  handOff.current = true;
                  onAnswer('ask_user_question', q.part.toolCallId, output);
                }}
              />
            );
          })}
        </>
      )}
    </section>
  );
}

/** The question's own text for the collapsed bar ('' when the tool input is not a question). */
function questionTextOf(tool: 'quiz' | 'ask_user_question', input: unknown): string {
  const parsed = tool === 'quiz' ? quizInputOrNull(input) : askInputOrNull(input);
  return parsed?.question.split('\n')[0] ?? '';
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
    ref.current?.querySelector<HTMLElement>('[role="radio"][tabindex="0"]')?.focus({ preventScroll: true });
  }, []);

  function check() {
    if (chosen === null || busy) return;
    onCheck(gradeQuiz(quiz, chosen));
  }

  // The options are one radio group (roving tabindex): Tab enters it at the chosen option (or the
  // first), the arrow keys, Home and End move and choose, 1..n choose by number, Enter checks.
  const focusedPosition = chosen === null ? 0 : Math.max(0, order.indexOf(chosen));
  function choosePosition(position: number) {
    const n = order.length;
    const p = ((position % n) + n) % n;
    setChosen(order[p]);
    ref.current?.querySelectorAll<HTMLElement>('[role="radio"]')[p]?.focus();
  }

  function onKeyDown(e: KeyboardEvent<HTMLDivElement>) {
    const onRadio = (e.target as HTMLElement).getAttribute('role') === 'radio';
    const n = Number.parseInt(e.key, 10);
    if (n >= 1 && n <= order.length && (e.target as HTMLElement).tagName !== 'TEXTAREA') {
      e.preventDefault();
      choosePosition(n - 1);
    } else if (onRadio && (e.key === 'ArrowDown' || e.key === 'ArrowRight')) {
      e.preventDefault();
      choosePosition(chosen === null ? 0 : focusedPosition + 1);
    } else if (onRadio && (e.key === 'ArrowUp' || e.key === 'ArrowLeft')) {
      e.preventDefault();
      choosePosition(chosen === null ? order.length - 1 : focusedPosition - 1);
    } else if (onRadio && e.key === 'Home') {
      e.preventDefault();
      choosePosition(0);
    } else if (onRadio && e.key === 'End') {
      e.preventDefault();
      choosePosition(order.length - 1);
    } else if (onRadio && e.key === 'Enter') {
      // Enter on an option chooses it, and checks it once it is chosen
      e.preventDefault();
      const position = Number((e.target as HTMLElement).dataset.position);
      if (order[position] === chosen) check();
      else choosePosition(position);
    }
  }

  const questionId = `dock-q-${toolCallId}`;
  return (
    <div className="dock-question" data-testid="dock-quiz" data-tool-call-id={toolCallId} onKeyDown={onKeyDown} ref={ref}>
      <div className="dock-scroll">
        <div className="dock-kind">Quiz</div>
        <div className="dock-prompt" id={questionId}>
          <Markdown text={quiz.question} />
        </div>
        <div className="dock-options" role="radiogroup" aria-labelledby={questionId}>
          {order.map((authored, position) => (
            <button
              key={authored}
              type="button"
              role="radio"
              aria-checked={chosen === authored}
              // the name as plain text: typeset math alone gives a radio no name (KaTeX's HTML is aria-hidden)
              aria-label={`${optionLetter(position)}: ${plainMath(quiz.options[authored])}`}
              tabIndex={position === focusedPosition ? 0 : -1}
              className={chosen === authored ? 'dock-option selected' : 'dock-option'}
              data-testid="dock-option"
              data-authored-index={authored}
              data-position={position}
              onClick={() => setChosen(authored)}
            >
              <span className="option-letter" aria-hidden="true">
                {optionLetter(position)}
              </span>
              <span className="dock-option-text">
                <Markdown text={quiz.options[authored]} inline />
              </span>
            </button>
          ))}
        </div>
      </div>
      <div className="dock-actions">
        <button type="button" className="btn btn-primary" data-testid="dock-submit" disabled={chosen === null || busy} onClick={check}>
          Check
        </button>
        <span className="muted small">{busy ? 'Wait for the tutor to finish…' : 'Pick an answer (↑ ↓ or 1–' + order.length + '), then check it.'}</span>
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
  // A suggested answer is picked first and then sent (Answer or Enter), like a quiz option: a
  // click never sends an answer the learner did not mean.
  const [chosen, setChosenState] = useState<number | null>(() => draftOf(toolCallId).chosen ?? null);
  const setChosen = (value: number | null) => {
    setChosenState(value);
    keepDraft(toolCallId, { chosen: value });
  };
  const ref = useRef<HTMLTextAreaElement>(null);
  const group = useRef<HTMLDivElement>(null);

  useEffect(() => {
    ref.current?.focus({ preventScroll: true });
  }, []);

  const usable = ask.options.map((o, i) => ({ o, i })).filter(({ o }) => o.trim());

  function send() {
    if (busy) return;
    const answer = text.trim();
    if (answer) onSend({ kind: 'answer', answer, chosen: null });
    else if (chosen !== null && ask.options[chosen]?.trim()) onSend({ kind: 'answer', answer: ask.options[chosen].trim(), chosen });
  }

  function choosePosition(position: number) {
    const n = usable.length;
    if (!n) return;
    const p = ((position % n) + n) % n;
    setChosen(usable[p].i);
    if (text) setText('');
    group.current?.querySelectorAll<HTMLElement>('[role="radio"]')[p]?.focus();
  }

  const focusedPosition = chosen === null ? 0 : Math.max(0, usable.findIndex((u) => u.i === chosen));
  function onOptionKey(e: KeyboardEvent<HTMLDivElement>) {
    if ((e.target as HTMLElement).getAttribute('role') !== 'radio') return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowRight') {
      e.preventDefault();
      choosePosition(chosen === null ? 0 : focusedPosition + 1);
    } else if (e.key === 'ArrowUp' || e.key === 'ArrowLeft') {
      e.preventDefault();
      choosePosition(chosen === null ? usable.length - 1 : focusedPosition - 1);
    } else if (e.key === 'Home') {
      e.preventDefault();
      choosePosition(0);
    } else if (e.key === 'End') {
      e.preventDefault();
      choosePosition(usable.length - 1);
    } else if (e.key === 'Enter') {
      // Enter on a suggestion picks it, and sends it once it is picked
      e.preventDefault();
      const position = Number((e.target as HTMLElement).dataset.position);
      if (usable[position]?.i === chosen) send();
      else choosePosition(position);
    }
  }

  const questionId = `dock-ask-${toolCallId}`;
  return (
    <div className="dock-question" data-testid="dock-ask">
      <div className="dock-scroll">
        <div className="dock-kind">Question</div>
        <div className="dock-prompt" id={questionId}>
          <Markdown text={ask.question} />
        </div>
        {usable.length > 0 && (
          <div className="dock-suggestions" role="radiogroup" aria-labelledby={questionId} ref={group} onKeyDown={onOptionKey}>
            {usable.map(({ o: option, i }, position) => (
              <button
                key={i}
                type="button"
                role="radio"
                aria-checked={chosen === i}
                aria-label={plainMath(option)}
                tabIndex={position === focusedPosition ? 0 : -1}
                className={chosen === i ? 'dock-option suggestion selected' : 'dock-option suggestion'}
                data-testid="dock-option"
                data-authored-index={i}
                data-position={position}
                disabled={busy}
                onClick={() => {
                  setChosen(i);
                  if (text) setText('');
                }}
              >
                <Markdown text={option} inline />
              </button>
            ))}
          </div>
        )}
      </div>
      <form
        className="dock-answer"
        onSubmit={(e) => {
          e.preventDefault();
          send();
        }}
      >
        <textarea
          ref={ref}
          rows={1}
          data-testid="dock-answer-input"
          aria-label="Your answer"
          placeholder={ask.options.length ? 'Or write your own answer…' : 'Your answer…'}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            // writing your own answer replaces a picked suggestion
            if (e.target.value.trim() && chosen !== null) setChosen(null);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              send();
            }
          }}
        />
        <button type="submit" className="btn btn-primary" data-testid="dock-send-answer" disabled={busy || (!text.trim() && chosen === null)}>
          Answer
        </button>
      </form>
    </div>
  );
}
