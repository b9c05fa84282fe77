import './composer.css';
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { appendWords } from '../machine_room/dictation';
import DictationBar, { useDictationAvailable, useFocusWithin } from '../machine_room/DictationBar';

interface Props {
  busy: boolean;
  onSend: (text: string) => void;
  onStop: () => void;
  /** A question waits in the dock: the composer becomes the secondary way to reply. */
  questionPending?: boolean;
}

const MAX_HEIGHT = 220;

/** The message box's element id: the skip link's target. */
export const COMPOSER_ID = 'composer-input';

/** Focus the lesson's message box, if one is on the page. */
export function focusComposer(): void {
  document.getElementById(COMPOSER_ID)?.focus();
}

export default function Composer({ busy, onSend, onStop, questionPending = false }: Props) {
  const [text, setText] = useState('');
  const ref = useRef<HTMLTextAreaElement>(null);
  const focus = useFocusWithin();
  // With a Deepgram key a mic shows even before focus, so the learner knows dictation exists.
  const dictation = useDictationAvailable();
  const [startSignal, setStartSignal] = useState(0);
  const [micFocused, setMicFocused] = useState(false);

  useEffect(() => {
    if (!questionPending) ref.current?.focus();
    // Only on mount; the dock takes the focus when a question waits.
  }, []);

  // Grow with the content, up to a limit.
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = `${Math.min(el.scrollHeight, MAX_HEIGHT)}px`;
  }, [text]);

  const canSend = !busy && text.trim() !== '';

  function submit() {
    if (!canSend) return;
    onSend(text.trim());
    setText('');
    ref.current?.focus();
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    submit();
  }

  function onKeyDown(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      submit();
    }
  }

  return (
    <form
      className={questionPending ? 'composer composer-secondary dictation-host' : 'composer dictation-host'}
      onSubmit={onSubmit}
      onFocus={focus.onFocus}
      onBlur={focus.onBlur}
    >
      <DictationBar active={focus.focused} onWords={(words) => setText((t) => appendWords(t, words))} fieldName="message" variant="floating" startSignal={startSignal} />
      {dictation && (!focus.focused || micFocused) && (
        <button
          type="button"
          className="icon-btn composer-mic"
          data-testid="composer-mic"
          aria-label="Dictate your message"
          title="Dictate with Deepgram"
          onFocus={() => setMicFocused(true)}
          onBlur={() => setMicFocused(false)}
          onClick={() => {
            setMicFocused(false);
            setStartSignal((n) => n + 1);
            ref.current?.focus();
          }}
        >
          <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
            <path d="M12 15a3 3 0 0 0 3-3V6a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3Z" fill="currentColor" />
            <path d="M6 11a6 6 0 0 0 12 0M12 17v4M9 21h6" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
          </svg>
        </button>
      )}
      <textarea
        ref={ref}
        id={COMPOSER_ID}
        className="composer-input"
        data-testid="composer-input"
        rows={1}
        value={text}
        placeholder={
          questionPending
            ? 'Or skip the question and write to your tutor instead…'
            : 'Ask your tutor…  (Enter to send, Shift+Enter for a new line)'
        }
        aria-label="Message"
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
      />
      {busy && (
        <button type="button" className="btn" data-testid="composer-stop" onClick={onStop}>
          Stop
        </button>
      )}
      <button type="submit" className={questionPending ? 'btn' : 'btn btn-primary'} data-testid="composer-send" disabled={!canSend}>
        Send
      </button>
    </form>
  );
}
