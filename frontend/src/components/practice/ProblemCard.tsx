import { useId, useRef } from 'react';
import { appendWords } from '../machine_room/dictation';
import { MAX_ANSWER, scoreWords, type PracticeProblem } from '../../core/practice/practice';
import DictationBar, { useFocusWithin } from '../machine_room/DictationBar';
import Markdown from '../Markdown';
import './exam.css';

interface Props {
  problem: PracticeProblem;
  /** The set is ready: answers may be submitted (the server refuses them before, 409). */
  setReady: boolean;
  draft: string;
  onDraft: (text: string) => void;
  onSubmit: () => void;
  submitting: boolean;
  submitError: string | null;
}

/**
 * One numbered problem of the exam page: its statement, one answer box and one Submit (one
 * attempt). Once answered the answer is read-only and the model solution shows, the rubric folded;
 * the score lands when the grader is done, or an honest "grade interrupted" line when it is not.
 */
export default function ProblemCard({ problem: p, setReady, draft, onDraft, onSubmit, submitting, submitError }: Props) {
  const answerId = useId();
  const answered = p.answer !== null;
  const heading = p.title.trim() || `Problem ${p.index}`;
  const focus = useFocusWithin();
  const latestDraft = useRef(draft);
  latestDraft.current = draft;

  return (
    <li className={`practice-problem status-${p.status}`} data-testid="problem" data-problem-id={p.id} data-status={p.status} data-grade-status={p.gradeStatus}>
      <header className="problem-head">
        <span className="problem-number" aria-hidden="true">
          {p.index}
        </span>
        <h2>
          <span className="visually-hidden">Problem {p.index}: </span>
          {heading}
        </h2>
      </header>

      {p.status === 'error' ? (
        <p className="error-text problem-error" role="alert" data-testid="problem-error">
          {p.error?.trim() || 'This problem could not be written.'}
        </p>
      ) : p.status !== 'ready' || p.statement === null ? (
        <p className="muted problem-waiting" data-testid="problem-waiting">
          {p.status === 'generating' && <span className="spinner spinner-tiny" aria-hidden="true" />}
          {p.status === 'generating' ? 'Writing this problem…' : 'Waiting to be written…'}
        </p>
      ) : (
        <>
          <div className="problem-statement" data-testid="problem-statement">
            <Markdown text={p.statement} />
          </div>

          <div className="problem-answer" onFocus={focus.onFocus} onBlur={focus.onBlur}>
            <label htmlFor={answerId} className="problem-answer-label">
              {answered ? 'Your answer' : 'Your reasoning'}
            </label>
            <textarea
              id={answerId}
              data-testid="answer-input"
              className="answer-input"
              rows={answered ? Math.min(16, Math.max(3, (p.answer ?? '').split('\n').length + 1)) : 7}
              value={answered ? (p.answer ?? '') : draft}
              readOnly={answered || submitting}
              maxLength={MAX_ANSWER}
              placeholder={answered ? undefined : 'Reason it through in your own words, then submit. One attempt.'}
              onChange={(e) => onDraft(e.target.value)}
            />
            {!answered && !submitting && (
              <DictationBar
                active={focus.focused}
                onWords={(words) => {
                  latestDraft.current = appendWords(latestDraft.current, words).slice(0, MAX_ANSWER);
                  onDraft(latestDraft.current);
                }}
                fieldName={`answer to problem ${p.index}`}
                variant="inline"
              />
            )}
            <div className="problem-actions">
              <button
                type="button"
                className="btn btn-primary btn-small"
                data-testid="answer-submit"
                disabled={answered || submitting || !setReady || !draft.trim()}
                onClick={onSubmit}
              >
                {answered ? 'Submitted' : submitting ? 'Submitting…' : 'Submit'}
              </button>
              {!answered && (
                <span className="muted small">
                  {setReady ? 'One attempt: once submitted, the answer is final.' : 'You can submit once every problem is written.'}
                  {draft.length > MAX_ANSWER * 0.9 && ` ${draft.length}/${MAX_ANSWER} characters.`}
                </span>
              )}
            </div>
            {submitError && (
              <p className="error-text small" role="alert" data-testid="answer-error">
                {submitError}
              </p>
            )}
          </div>

          {answered && <Reveal problem={p} />}
        </>
      )}
    </li>
  );
}

function Reveal({ problem: p }: { problem: PracticeProblem }) {
  return (
    <div className="problem-reveal">
      <GradeLine problem={p} />
      {p.solution !== null && (
        <section className="problem-solution" data-testid="solution" aria-label="Model solution">
          <h3>Model solution</h3>
          <Markdown text={p.solution} />
        </section>
      )}
      {p.rubric !== null && (
        <details className="problem-rubric" data-testid="rubric">
          <summary>Rubric</summary>
          <Markdown text={p.rubric} />
        </details>
      )}
    </div>
  );
}

function GradeLine({ problem: p }: { problem: PracticeProblem }) {
  if (p.gradeStatus === 'graded' && p.grade) {
    return (
      <div className="problem-grade" data-testid="grade">
        <span className="grade-score" data-testid="grade-score">
          {scoreWords(p.grade)}
        </span>
        <p className="grade-comment" data-testid="grade-comment">
          {p.grade.comment}
        </p>
      </div>
    );
  }
  if (p.gradeStatus === 'interrupted' || p.gradeStatus === 'error') {
    return (
      <p className="problem-grade-interrupted" data-testid="grade-interrupted">
        Grade interrupted{p.gradeError?.trim() ? `: ${p.gradeError.trim().replace(/\.$/, '')}` : ''}. Your answer stands; there is no second attempt.
      </p>
    );
  }
  return (
    <p className="muted small problem-grading" data-testid="grade-pending">
      <span className="spinner spinner-tiny" aria-hidden="true" /> Grading…
    </p>
  );
}
