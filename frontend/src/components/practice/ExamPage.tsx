import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router-dom';
import { useFound } from '../useFound';
import * as api from '../../api';
import { ApiError, describeError } from '../../core/errors';
import { chainCoverage, examProgress, keepAnswered, levelsLine, withProblem, type ProblemSet } from '../../core/practice/practice';
import { selectionSummary } from '../../core/library/chainSelection';
import { formatFull, formatRelative } from '../../core/time';
import { useServerEvents } from '../../serverEvents';
import { usePracticeLevels } from './usePracticeLevels';
import ProblemCard from './ProblemCard';
import './exam.css';

// Answers being written, by set and problem: kept in memory while the app is open, so leaving the
// page (or a refetch re-rendering it) never loses them. A submitted answer's draft is dropped.
const drafts = new Map<string, string>();
const draftKey = (setId: string, problemId: string) => `${setId}\u0000${problemId}`;

/** `/practice/:id`: the exam page. Follows the set live on `activity-changed`. */
export default function ExamPage() {
  const { id = '' } = useParams();
  const { levels } = usePracticeLevels();
  const [set, setSet] = useState<ProblemSet | null>(null);
  const [params] = useSearchParams();
  useFound('data-problem-id', params.get('problem'), set?.problems.length); // a search result's problem
  const [loadError, setLoadError] = useState<{ status: number | null; detail: string } | null>(null);
  const [typed, setTyped] = useState<Readonly<Record<string, string>>>({});
  const [submitting, setSubmitting] = useState<ReadonlySet<string>>(new Set());
  const [submitErrors, setSubmitErrors] = useState<Readonly<Record<string, string>>>({});
  const known = useRef<ProblemSet | null>(null);
  const seq = useRef(0);

  const show = useCallback((next: ProblemSet) => {
    known.current = next;
    setSet(next);
  }, []);

  const load = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const fresh = await api.getPracticeSet(id);
      if (mine !== seq.current) return;
      // A read begun before an answer's reply never un-answers a problem.
      show(keepAnswered(fresh, known.current));
      setLoadError(null);
    } catch (err) {
      if (mine !== seq.current) return;
      setLoadError({ status: err instanceof ApiError ? err.status : null, detail: describeError(err).detail });
    }
  }, [id, show]);

  useEffect(() => {
    known.current = null;
    setSet(null);
    setLoadError(null);
    setSubmitErrors({});
    void load();
  }, [load]);

  // Every phase write and every grade (and every reconnect): read the set again.
  useServerEvents(['activity-changed'], () => void load());

  const draftOf = (problemId: string) => typed[draftKey(id, problemId)] ?? drafts.get(draftKey(id, problemId)) ?? '';
  const setDraft = (problemId: string, text: string) => {
    const key = draftKey(id, problemId);
    drafts.set(key, text);
    setTyped((t) => ({ ...t, [key]: text }));
  };

  async function submit(problemId: string) {
    const answer = draftOf(problemId);
    if (!answer.trim() || submitting.has(problemId)) return;
    setSubmitting((s) => new Set(s).add(problemId));
    setSubmitErrors(({ [problemId]: _gone, ...rest }) => rest);
    try {
      const problem = await api.answerProblem(id, problemId, answer);
      drafts.delete(draftKey(id, problemId));
      if (known.current) show(withProblem(known.current, problem));
    } catch (err) {
      const parsed = describeError(err);
      setSubmitErrors((e) => ({ ...e, [problemId]: parsed.detail }));
      // Already answered (elsewhere), or the set moved on: show what the server holds.
      if (err instanceof ApiError && (err.status === 400 || err.status === 409)) void load();
    } finally {
      setSubmitting((s) => {
        const next = new Set(s);
        next.delete(problemId);
        return next;
      });
    }
  }

  if (!set) {
    return (
      <div className="page exam-page">
        <Link to="/practice" className="exam-back">
          ← Practice
        </Link>
        {loadError ? (
          <p className={loadError.status === 404 ? 'muted' : 'error-text'} role="alert" data-testid="exam-error">
            {loadError.status === 404 ? 'This problem set does not exist (any more).' : `Could not load the problem set: ${loadError.detail}`}
          </p>
        ) : (
          <p className="muted small">Loading…</p>
        )}
      </div>
    );
  }

  const progress = examProgress(set);
  const running = set.status === 'partitioning' || set.status === 'generating';
  const ready = set.status === 'ready';
  const { missing } = chainCoverage(
    set.chains,
    set.problems.map((p) => p.chainIds),
  );

  return (
    <div className="page exam-page" data-testid="exam-page" data-set-id={set.id} data-status={set.status}>
      <Link to="/practice" className="exam-back">
        ← Practice
      </Link>
      <header className="exam-head">
        <h1 data-testid="exam-title">{set.title || 'Untitled set'}</h1>
        <p className="exam-levels" data-testid="exam-levels">
          {levelsLine(levels, set.params)}
        </p>
        <p className={`exam-status status-${set.status}`} data-testid="exam-status" role="status">
          {running && <span className="spinner spinner-tiny" aria-hidden="true" />}
          {progress.words}
        </p>
        <p className="muted small exam-meta">
          {set.createdAt && <span title={formatFull(set.createdAt)}>Created {formatRelative(set.createdAt)}</span>}
          {set.nodeIds.length > 0 && <span> · {selectionSummary(set.nodeIds.length, set.chains.length)}</span>}
          {' · '}
          <a
            href={`/api/practice/sets/${encodeURIComponent(set.id)}/export.md`}
            download
            data-testid="export-set"
            title="Download this set as a Markdown file: problems, your answers, grades and the model solutions of what you answered"
          >
            Export as Markdown
          </a>
        </p>
        {set.note && (
          <p className="exam-note small" data-testid="exam-note">
            <span className="muted">Your note:</span> {set.note}
          </p>
        )}
        {loadError && (
          <p className="error-text small" role="alert" data-testid="exam-refresh-error">
            Could not refresh: {loadError.detail}
          </p>
        )}
        {ready && set.problems.length > 0 && missing.length > 0 && (
          <p className="muted small" data-testid="exam-coverage">
            {missing.length} {missing.length === 1 ? 'chain of the selection is' : 'chains of the selection are'} in no problem.
          </p>
        )}
      </header>

      {set.problems.length > 0 && (
        <ol className="problem-list" data-testid="problem-list">
          {set.problems.map((p) => (
            <ProblemCard
              key={p.id}
              problem={p}
              setReady={ready}
              draft={draftOf(p.id)}
              onDraft={(text) => setDraft(p.id, text)}
              onSubmit={() => void submit(p.id)}
              submitting={submitting.has(p.id)}
              submitError={submitErrors[p.id] ?? null}
            />
          ))}
        </ol>
      )}
      {set.problems.length === 0 && set.status === 'partitioning' && <p className="muted exam-waiting">The problems appear here as they are planned and written.</p>}
    </div>
  );
}
