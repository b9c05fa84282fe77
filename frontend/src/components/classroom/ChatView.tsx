import './chatView.css';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import * as api from '../../api';
import type { ChatRecord } from '../../api';
import { useActivity } from '../../activityState';
import { useAppState } from '../../appState';
import { describeError } from '../../core/errors';
import { canRegenerate, showTypingIndicator } from '../../core/classroom/messages';
import { phaseOf } from '../../core/classroom/phases';
import { derivePlanStatuses, planOf } from '../../core/classroom/plan';
import { answersById, pendingQuestions } from '../../core/classroom/transcript';
import { TRANSCRIPT_WINDOW, revealEarlier, transcriptWindow } from '../../core/classroom/transcriptWindow';
import { windowToShow } from '../../core/machine_room/search';
import { useSearchParams } from 'react-router-dom';
import { useLessonChat } from './useLessonChat';
import { useLessonCoverage } from './useLessonCoverage';
import { useLessonJobs, WorkbenchProvider } from '../workbench/workbenchState';
import { createPortal } from 'react-dom';
import Composer, { COMPOSER_ID, focusComposer } from './Composer';
import EarlierMessages from './EarlierMessages';
import MessageView from './MessageView';
import PlanPanel from './PlanPanel';
import QuestionDock from './QuestionDock';
import SessionHeader from './SessionHeader';

const NO_RETRY = new Set(['bad_answer', 'not_pending', 'already_answered']);

export default function ChatView({ record }: { record: ChatRecord }) {
  const { chats, refreshSettings } = useAppState();
  const lesson = useLessonChat(record);
  const { messages, status, busy, error, usage } = lesson;
  // A failed turn may mean the model itself failed (e.g. the offline model crashed and is being
  // restarted): the banner reads the model's state from settings, so read it again.
  useEffect(() => {
    if (error) void refreshSettings();
  }, [error, refreshSettings]);

  // The lesson's place in the graph; leaving the lesson (another page, or closing the tab) has its
  // new teaching read into the graph, even below the budget (the server waits for a running reply).
  const { coverage, setCoverage, error: coverageError } = useLessonCoverage(record.id, busy);
  // The lesson's background jobs, for the dispatch cards (followed on `jobs-changed`).
  const jobs = useLessonJobs(record.id);
  const { refresh: refreshActivity } = useActivity();
  const leaveState = useRef({ coverage, busy });
  leaveState.current = { coverage, busy };
  useEffect(() => {
    let left = false;
    const leave = () => {
      const { coverage: c, busy: running } = leaveState.current;
      if (left || !c || !(c.uncoveredTokens > 0 || running)) return;
      left = true;
      void api.flushLesson(record.id, 'leave').then(
        () => void refreshActivity(),
        () => undefined, // leaving is best effort: the idle trigger still reads it later
      );
    };
    window.addEventListener('pagehide', leave);
    return () => {
      window.removeEventListener('pagehide', leave);
      leave();
    };
  }, [record.id, refreshActivity]);

  const title = chats?.find((c) => c.id === record.id)?.title || record.title || 'Untitled lesson';
  const phase = useMemo(() => phaseOf(messages), [messages]);
  const plan = useMemo(() => planOf(messages), [messages]);
  const statuses = useMemo(() => (plan ? derivePlanStatuses(plan, messages) : {}), [plan, messages]);
  const pending = useMemo(() => pendingQuestions(messages), [messages]);
  const pendingIds = pending.map((q) => q.part.toolCallId).join(' ');
  const answers = useMemo(() => answersById(messages), [messages]);
  const lastMessage = messages[messages.length - 1];
  // Refused answers were already re-synced from the record: nothing to retry.
  const errorInfo = error ? describeError(error) : null;
  const retryable = errorInfo ? !NO_RETRY.has(errorInfo.code ?? '') : !!lesson.failure;
  const canRetry = !busy && retryable && !!lastMessage && lastMessage.role !== 'system';

  // Keep the transcript pinned to the bottom while the user has not scrolled up.
  const scrollRef = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  const onScroll = useCallback(() => {
    const el = scrollRef.current;
    if (!el) return;
    stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  }, []);
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (el && stickToBottom.current) el.scrollTop = el.scrollHeight;
  }, [messages, status, error, pendingIds]);

  // A Workbench card that arrives is scrolled into view, not left below the fold under the
  // composer (issue 29): the cards on the page at first are known; a new one is revealed whole
  // (its top, when it is taller than the transcript), and a card that ends the transcript keeps
  // the transcript following the bottom.
  const knownCards = useRef<Set<string> | null>(null);
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const cards = [...el.querySelectorAll<HTMLElement>('[data-testid="artifact-card"]')];
    const known = knownCards.current;
    knownCards.current = new Set(cards.map((c) => c.id));
    if (known === null) return; // the lesson as it was opened: nothing arrived
    const arrived = cards.filter((c) => !known.has(c.id));
    const card = arrived[arrived.length - 1];
    if (!card) return;
    const view = el.getBoundingClientRect();
    const box = card.getBoundingClientRect();
    if (box.height >= view.height || box.top < view.top) el.scrollTop += box.top - view.top;
    else if (box.bottom > view.bottom) el.scrollTop += box.bottom - view.bottom;
    stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  }, [messages]);

  // Content that grows after it was drawn (a picture that loads, a card, the dock below) keeps a
  // transcript that follows the bottom at the bottom.
  useEffect(() => {
    const el = scrollRef.current;
    const inner = el?.firstElementChild;
    if (!el || !inner || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => {
      if (stickToBottom.current) el.scrollTop = el.scrollHeight;
    });
    observer.observe(inner);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  // Only the transcript's DOM is windowed (a long lesson would take minutes to draw); everything
  // above reads the whole message list.
  const [windowLimit, setWindowLimit] = useState(TRANSCRIPT_WINDOW);
  const shown = transcriptWindow(messages.length, windowLimit);
  // Revealing earlier messages keeps what the learner looks at in place (its distance from the bottom).
  const revealFromBottom = useRef<number | null>(null);
  const showEarlier = useCallback(() => {
    const el = scrollRef.current;
    revealFromBottom.current = el ? el.scrollHeight - el.scrollTop : null;
    setWindowLimit((limit) => revealEarlier(messagesRef.current.length, limit));
  }, []);
  const messagesRef = useRef(messages);
  messagesRef.current = messages;
  useLayoutEffect(() => {
    const el = scrollRef.current;
    const fromBottom = revealFromBottom.current;
    revealFromBottom.current = null;
    if (el && fromBottom !== null) el.scrollTop = el.scrollHeight - fromBottom;
    // earlier messages shown again are not arrivals: their cards join the known ones
    const cards = el?.querySelectorAll<HTMLElement>('[data-testid="artifact-card"]') ?? [];
    if (knownCards.current) for (const c of cards) knownCards.current.add(c.id);
  }, [windowLimit]);

  // A search result opens the lesson at its message (`?m=<message id>`, issue 31 item 5): the
  // window is widened to include it, it is scrolled to the middle and highlighted, once.
  const [params] = useSearchParams();
  const foundId = params.get('m');
  const foundDone = useRef<string | null>(null);
  const foundIndex = foundId ? messages.findIndex((m) => m.id === foundId) : -1;
  useEffect(() => {
    if (foundIndex < 0) return;
    const need = windowToShow(messages.length, foundIndex);
    if (need > windowLimit) setWindowLimit(need);
  }, [foundIndex, messages.length, windowLimit]);
  useEffect(() => {
    const el = scrollRef.current;
    if (!el || !foundId || foundIndex < 0 || foundDone.current === foundId) return;
    const target = el.querySelector<HTMLElement>(`[data-message-id="${CSS.escape(foundId)}"]`);
    if (!target) return;
    foundDone.current = foundId;
    stickToBottom.current = false;
    el.querySelectorAll('.msg-found').forEach((n) => n.classList.remove('msg-found'));
    target.classList.add('msg-found');
    target.setAttribute('data-found', 'true');
    target.scrollIntoView({ block: 'center' });
  }, [foundId, foundIndex, windowLimit, messages.length]);

  const { send: sendText, answer: sendAnswer } = lesson;
  const send = useCallback(
    (text: string) => {
      stickToBottom.current = true;
      sendText(text);
    },
    [sendText],
  );
  const answer = useCallback<typeof sendAnswer>(
    (...args) => {
      stickToBottom.current = true;
      sendAnswer(...args);
    },
    [sendAnswer],
  );

  const bannerText = errorInfo ? errorInfo.detail : (lesson.failure ?? lesson.notice);
  // Below 900 px the plan is a panel toggled from the header (planPanel.css); wider, it always shows.
  const [planOpen, setPlanOpen] = useState(false);

  return (
    <div className="chat">
      <SkipToComposer />
      <SessionHeader
        chatId={record.id}
        title={title}
        status={status}
        phase={phase}
        model={lesson.model}
        usage={usage}
        busy={busy}
        onModelChanged={lesson.setModel}
        coverage={coverage}
        coverageError={coverageError}
        onCoverage={setCoverage}
        planOpen={planOpen}
        onTogglePlan={() => setPlanOpen((open) => !open)}
      />
      <div className="chat-body">
        <div className="chat-main">
          <WorkbenchProvider jobs={jobs} messages={messages}>
            <div
              className="transcript"
              ref={scrollRef}
              onScroll={onScroll}
              data-testid="transcript"
              // focusable, so the keyboard can scroll it (axe: scrollable-region-focusable)
              tabIndex={0}
              role="region"
              aria-label="Lesson transcript"
            >
              <div className="transcript-inner">
                {messages.length === 0 && (
                  <p className="empty-chat muted">Name a topic to begin, e.g. “Teach me how derivatives work.” Your tutor first checks what you already know.</p>
                )}
                <EarlierMessages hidden={shown.hidden} next={shown.next} onShow={showEarlier} />
                {messages.slice(shown.start).map((m, j) => {
                  const isLast = shown.start + j === messages.length - 1;
                  return (
                    <MessageView
                      key={m.id}
                      message={m}
                      streaming={busy && isLast && m.role === 'assistant'}
                      pendingIds={isLast ? pendingIds : ''}
                    />
                  );
                })}
                {canRegenerate(status, messages) && !lesson.waiting && (
                  <div className="regenerate-row">
                    <button
                      type="button"
                      className="btn btn-small"
                      data-testid="regenerate"
                      title="Have the teacher write this reply again"
                      onClick={lesson.regenerateLast}
                    >
                      Regenerate
                    </button>
                  </div>
                )}
                {showTypingIndicator(status, messages) && (
                  <div className="typing" data-testid="streaming-indicator" aria-label="The tutor is writing">
                    <span />
                    <span />
                    <span />
                  </div>
                )}
              </div>
            </div>
          </WorkbenchProvider>

          {bannerText && (
            <div className="chat-error">
              <div className="banner banner-error" role="alert" data-testid="error-banner">
                <span className="error-detail">{bannerText}</span>
                <span className="banner-actions">
                  {canRetry && (
                    <button type="button" className="btn btn-small" data-testid="error-retry" onClick={() => void lesson.retry()}>
                      Retry
                    </button>
                  )}
                  <button
                    type="button"
                    className="btn btn-small"
                    data-testid="error-dismiss"
                    onClick={() => (error ? lesson.clearError() : lesson.failure ? lesson.clearFailure() : lesson.clearNotice())}
                  >
                    Dismiss
                  </button>
                </span>
              </div>
            </div>
          )}

          <div className="chat-bottom">
            {lesson.waiting && (
              <p className="turn-waiting" data-testid="turn-waiting" role="status">
                <span className="spinner" aria-hidden="true" /> Waiting for the other turn in this lesson to finish…
              </p>
            )}
            <QuestionDock key={record.id} pending={pending} answers={answers} busy={busy} onAnswer={answer} onHandOff={focusComposer} />
            <Composer busy={busy} onSend={send} onStop={() => void lesson.stopTurn()} questionPending={pending.length > 0} />
          </div>
        </div>
        <PlanPanel plan={plan} statuses={statuses} phase={phase} open={planOpen} onClose={() => setPlanOpen(false)} />
      </div>
    </div>
  );
}

/**
 * "Skip to the message box": the page's first Tab stop while a lesson is open (placed first in
 * the body, before the sidebar), shown only when focused.
 */
function SkipToComposer() {
  const [host, setHost] = useState<HTMLElement | null>(null);
  useLayoutEffect(() => {
    const el = document.createElement('div');
    document.body.prepend(el);
    setHost(el);
    return () => el.remove();
  }, []);
  if (!host) return null;
  return createPortal(
    <a
      href={`#${COMPOSER_ID}`}
      className="skip-link"
      data-testid="skip-to-composer"
      onClick={(e) => {
        e.preventDefault();
        focusComposer();
      }}
    >
      Skip to the message box
    </a>,
    host,
  );
}
