import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { getChat, type ChatRecord } from '../../api';
import { ApiError, describeError } from '../../core/errors';
import ChatView from './ChatView';

type LoadState =
  | { kind: 'loading' }
  | { kind: 'error'; message: string; notFound: boolean }
  | { kind: 'ready'; record: ChatRecord };

export default function ChatPage() {
  const { id = '' } = useParams();
  // Remount everything (loader and useChat) when the session changes.
  return <ChatLoader key={id} id={id} />;
}

function ChatLoader({ id }: { id: string }) {
  const [state, setState] = useState<LoadState>({ kind: 'loading' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let cancelled = false;
    getChat(id).then(
      (record) => {
        if (!cancelled) setState({ kind: 'ready', record });
      },
      (err: unknown) => {
        if (cancelled) return;
        const notFound = err instanceof ApiError && err.status === 404;
        setState({ kind: 'error', message: describeError(err).detail, notFound });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [id, attempt]);

  if (state.kind === 'loading') {
    return (
      <div className="page page-narrow">
        <p className="muted">Loading lesson…</p>
      </div>
    );
  }
  if (state.kind === 'error') {
    return (
      <div className="page page-narrow">
        <h1>{state.notFound ? 'Lesson not found' : 'Could not load this lesson'}</h1>
        {state.notFound ? (
          // Never the server's "no session 'c_…'": an id means nothing to a learner (issue 18).
          <p data-testid="lesson-missing">This lesson doesn&apos;t exist (it may have been deleted). Pick one from the list, or start a new one.</p>
        ) : (
          <div className="banner banner-error" role="alert" data-testid="error-banner">
            {state.message}
          </div>
        )}
        <p>
          {!state.notFound && (
            <button
              type="button"
              className="btn"
              onClick={() => {
                setState({ kind: 'loading' });
                setAttempt((n) => n + 1);
              }}
            >
              Try again
            </button>
          )}{' '}
          <Link to="/" data-testid="go-home">
            Go to the home page
          </Link>
        </p>
      </div>
    );
  }
  return <ChatView record={state.record} />;
}
