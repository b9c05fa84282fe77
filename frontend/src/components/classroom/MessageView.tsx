import './messageView.css';
import { memo } from 'react';
import type { UIMessage } from 'ai';
import { messageText } from '../../core/classroom/messages';
import { DEMO_MARK, isDemoReply } from '../../core/machine_room/demo';
import { asToolPart } from '../../core/toolParts';
import { ARTIFACT_PART, ENQUEUED_PART, artifactParts, isSteerMessage, readArtifactPart } from '../../core/workbench/workbench';
import Markdown from '../Markdown';
import MathText from '../MathText';
import ToolPartView from './ToolPartView';
import ArtifactCard from '../workbench/ArtifactCard';

type Part = UIMessage['parts'][number];

function isImageFile(part: Part): part is Extract<Part, { type: 'file' }> {
  return part.type === 'file' && typeof part.mediaType === 'string' && part.mediaType.startsWith('image/');
}

/** The image types a learner message may carry (the server's `LEARNER_IMAGE_TYPES`, issue 26). */
const LEARNER_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Whether the tutor reads this part of a learner message: text, or an image of a type the app
 * takes as a data URL (the server's `LearnerPart`). */
function readByTutor(part: Part): boolean {
  if (part.type === 'text') return typeof (part as { text?: unknown }).text === 'string';
  return (
    part.type === 'file' &&
    LEARNER_IMAGE_TYPES.has(String(part.mediaType)) &&
    typeof part.url === 'string' &&
    part.url.startsWith(`data:${part.mediaType};base64,`)
  );
}

/**
 * A learner message that holds parts the app never sends (an older build let them in, issue 26):
 * the server keeps them in the record and leaves them out of what the tutor reads. Says so, with
 * their types, so nothing is dropped silently; null when every part is read.
 */
export function unreadPartsNote(message: Pick<UIMessage, 'parts'>): string | null {
  const unread = message.parts.filter((p) => !readByTutor(p));
  if (unread.length === 0) return null;
  const types = [...new Set(unread.map((p) => String((p as { type?: unknown }).type ?? 'unknown').slice(0, 40)))];
  const count = unread.length === 1 ? 'One part' : `${unread.length} parts`;
  return `${count} of this message (${types.join(', ')}) ${unread.length === 1 ? 'is' : 'are'} kept but not read by your tutor: the app does not send such parts.`;
}

function UserMessage({ message }: { message: UIMessage }) {
  const images = message.parts.filter(isImageFile);
  const unread = unreadPartsNote(message);
  return (
    <div className="msg msg-user" data-testid="message-user" data-message-id={message.id}>
      <div className="bubble">
        {images.map((p, i) => (
          <img key={i} className="msg-image" src={p.url} alt={p.filename ?? 'attached image'} />
        ))}
        <MathText text={messageText(message)} />
        {unread && (
          <p className="msg-unread" data-testid="unread-parts">
            {unread}
          </p>
        )}
      </div>
    </div>
  );
}

/**
 * A steer: the server delivering a background job's outcome. Never a learner bubble: its text is
 * for the model; what it carries is drawn as the artifact card.
 */
function SteerMessage({ message }: { message: UIMessage }) {
  return (
    <div className="msg msg-steer" data-testid="message-steer" data-message-id={message.id}>
      {artifactParts(message).map((data, i) => (
        <ArtifactCard key={data.id || i} data={data} messageId={message.id} />
      ))}
    </div>
  );
}

interface AssistantProps {
  message: UIMessage;
  streaming: boolean;
  /** Space-separated ids of the question calls pending in this message. */
  pendingIds: string;
  /** The faint usage line ("" = none recorded). */
  usage: string;
}

/** A saved reply the turn did not finish (aborted, or the model failed mid-answer): what it says. */
export function cutShortNote(message: UIMessage): string | null {
  const metadata = message.metadata;
  if (typeof metadata !== 'object' || metadata === null) return null;
  const { interrupted, error } = metadata as { interrupted?: unknown; error?: unknown };
  if (interrupted !== true) return null;
  return typeof error === 'string' && error.trim()
    ? `This reply was cut short: ${error.trim().replace(/\.+$/, '')}.`
    : 'This reply was cut short (stopped before it finished).';
}

function AssistantMessage({ message, streaming, pendingIds, usage }: AssistantProps) {
  const pending = new Set(pendingIds.split(' ').filter(Boolean));
  const cutShort = streaming ? null : cutShortNote(message);
  return (
    <div
      className={streaming ? 'msg msg-assistant streaming' : 'msg msg-assistant'}
      data-testid="message-assistant"
      data-message-id={message.id}
    >
      {isDemoReply(message.metadata) && (
        <div className="demo-mark" role="note" data-testid="demo-mark" title="Written by the offline demo model, which gets facts wrong">
          {DEMO_MARK}
        </div>
      )}
      {message.parts.map((part, i) => {
        if (part.type === 'text') return <Markdown key={i} text={part.text} />;
        if (part.type === 'reasoning') {
          if (!part.text.trim()) return null;
          return (
            <details key={i} className="reasoning">
              <summary>Reasoning</summary>
              <Markdown text={part.text} />
            </details>
          );
        }
        if (isImageFile(part)) return <img key={i} className="msg-image" src={part.url} alt={part.filename ?? 'image'} />;
        if (part.type === ARTIFACT_PART) {
          // a result delivered into this running turn: the same card as its steer
          const data = readArtifactPart(part);
          return data ? <ArtifactCard key={data.id || i} data={data} messageId={message.id} /> : null;
        }
        if (part.type === ENQUEUED_PART) return null;
        const tool = asToolPart(part);
        if (tool) return <ToolPartView key={tool.toolCallId} part={tool} pending={pending.has(tool.toolCallId)} />;
        return null;
      })}
      {cutShort && (
        <div className="message-cut-short" role="note" data-testid="message-cut-short">
          {cutShort}
        </div>
      )}
      {usage && !streaming && (
        <div className="message-usage" data-testid="message-usage">
          {usage}
        </div>
      )}
    </div>
  );
}

function MessageViewImpl({ message, streaming, pendingIds = '', usage = '' }: Omit<AssistantProps, 'pendingIds' | 'usage'> & Partial<AssistantProps>) {
  if (message.role === 'user') return isSteerMessage(message) ? <SteerMessage message={message} /> : <UserMessage message={message} />;
  if (message.role === 'assistant') return <AssistantMessage message={message} streaming={streaming} pendingIds={pendingIds} usage={usage} />;
  return null; // system messages are not shown
}

const MessageView = memo(MessageViewImpl);
export default MessageView;
