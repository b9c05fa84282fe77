import { memo } from 'react';
import type { UIMessage } from 'ai';
import { messageText } from '../core/messages';
import Markdown from './Markdown';

type Part = UIMessage['parts'][number];

function isImageFile(part: Part): part is Extract<Part, { type: 'file' }> {
  return part.type === 'file' && typeof part.mediaType === 'string' && part.mediaType.startsWith('image/');
}

function toolLabel(part: Part): string | null {
  if (part.type === 'dynamic-tool') return part.toolName;
  if (part.type.startsWith('tool-')) return part.type.slice('tool-'.length);
  return null;
}

function UserMessage({ message }: { message: UIMessage }) {
  const images = message.parts.filter(isImageFile);
  return (
    <div className="msg msg-user" data-testid="message-user" data-message-id={message.id}>
      <div className="bubble">
        {images.map((p, i) => (
          <img key={i} className="msg-image" src={p.url} alt={p.filename ?? 'attached image'} />
        ))}
        {messageText(message)}
      </div>
    </div>
  );
}

function AssistantMessage({ message, streaming }: { message: UIMessage; streaming: boolean }) {
  return (
    <div
      className={streaming ? 'msg msg-assistant streaming' : 'msg msg-assistant'}
      data-testid="message-assistant"
      data-message-id={message.id}
    >
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
        const tool = toolLabel(part);
        if (tool) return <div key={i} className="tool-note">Used tool: {tool}</div>;
        return null;
      })}
    </div>
  );
}

function MessageViewImpl({ message, streaming }: { message: UIMessage; streaming: boolean }) {
  if (message.role === 'user') return <UserMessage message={message} />;
  if (message.role === 'assistant') return <AssistantMessage message={message} streaming={streaming} />;
  return null; // system messages are not shown
}

const MessageView = memo(MessageViewImpl);
export default MessageView;
