import { useCallback, useLayoutEffect, useRef } from 'react';
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import type { ChatRecord } from '../api';
import { useAppState } from '../appState';
import { describeError } from '../core/errors';
import { showTypingIndicator } from '../core/messages';
import Composer from './Composer';
import MessageView from './MessageView';

// One transport for the whole app. It POSTs {id, messages, trigger, messageId}
// to /api/chat and reads the v6 UI message stream (SSE) from the answer.
const transport = new DefaultChatTransport({ api: '/api/chat' });

export default function ChatView({ record }: { record: ChatRecord }) {
  const { chats, refreshChats } = useAppState();
  const { messages, sendMessage, status, error, stop, clearError, regenerate } = useChat({
    id: record.id,
    messages: record.messages,
    transport,
    onFinish: () => {
      // Titles, counts and order change after a turn.
      void refreshChats();
    },
  });

  const busy = status === 'submitted' || status === 'streaming';
  const title = chats?.find((c) => c.id === record.id)?.title || record.title || 'Untitled lesson';
  const lastMessage = messages[messages.length - 1];
  const canRetry = !busy && !!error && !!lastMessage && lastMessage.role !== 'system';

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
  }, [messages, status, error]);

  const send = useCallback(
    (text: string) => {
      stickToBottom.current = true;
      void sendMessage({ text });
    },
    [sendMessage],
  );

  return (
    <div className="chat">
      <header className="chat-header">
        <h1 className="chat-title">{title}</h1>
        <span className={`chat-status status-${status}`} data-testid="chat-status" title="Chat status">
          {status}
        </span>
      </header>

      <div className="transcript" ref={scrollRef} onScroll={onScroll} data-testid="transcript">
        <div className="transcript-inner">
          {messages.length === 0 && (
            <p className="empty-chat muted">Ask a question or name a topic to begin, e.g. “Teach me how derivatives work.”</p>
          )}
          {messages.map((m, i) => (
            <MessageView key={m.id} message={m} streaming={busy && i === messages.length - 1 && m.role === 'assistant'} />
          ))}
          {showTypingIndicator(status, messages) && (
            <div className="typing" data-testid="streaming-indicator" aria-label="The tutor is writing">
              <span />
              <span />
              <span />
            </div>
          )}
        </div>
      </div>

      {error && (
        <div className="chat-error">
          <div className="banner banner-error" role="alert" data-testid="error-banner">
            <span className="error-detail">{describeError(error).detail}</span>
            <span className="banner-actions">
              {canRetry && (
                <button type="button" className="btn btn-small" data-testid="error-retry" onClick={() => void regenerate()}>
                  Retry
                </button>
              )}
              <button type="button" className="btn btn-small" data-testid="error-dismiss" onClick={() => clearError()}>
                Dismiss
              </button>
            </span>
          </div>
        </div>
      )}

      <Composer busy={busy} onSend={send} onStop={() => void stop()} />
    </div>
  );
}
