import { useCallback, useEffect, useRef, useState, type FocusEvent } from 'react';
import { getSettings } from '../../api';
import { browserDeps, canDictate, DictationSession, type DictationState } from './dictation';
import './dictation.css';

// ---------------------------------------------------------------------------
// Whether dictation is offered: the browser can record and the server holds a Deepgram key
// (GET /api/settings says `keys.deepgram.set`, never the key). One request serves every bar on
// a page; it is asked again after AVAILABILITY_TTL_MS (a key added in Settings shows up on the
// next page).

const AVAILABILITY_TTL_MS = 10_000;
let availability: { at: number; answer: Promise<boolean> } | null = null;

function deepgramKeySet(): Promise<boolean> {
  const now = Date.now();
  if (availability && now - availability.at < AVAILABILITY_TTL_MS) return availability.answer;
  const answer = getSettings().then(
    (s) => s.keys?.deepgram?.set === true,
    () => false,
  );
  availability = { at: now, answer };
  return answer;
}

export function useDictationAvailable(): boolean {
  const [available, setAvailable] = useState(false);
  useEffect(() => {
    if (!canDictate()) return;
    let live = true;
    void deepgramKeySet().then((yes) => live && setAvailable(yes));
    return () => {
      live = false;
    };
  }, []);
  return available;
}

/** Focus within a container (the field, its bar and its buttons): `focused` and the two handlers
 * to spread on the container element. */
export function useFocusWithin(): { focused: boolean; onFocus: () => void; onBlur: (e: FocusEvent<HTMLElement>) => void } {
  const [focused, setFocused] = useState(false);
  const onFocus = useCallback(() => setFocused(true), []);
  const onBlur = useCallback((e: FocusEvent<HTMLElement>) => {
    if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setFocused(false);
  }, []);
  return { focused, onFocus, onBlur };
}

// ---------------------------------------------------------------------------

interface Props {
  /** The field or the bar has focus: the bar shows, and a dictation may run. Losing the focus
   * stops a running dictation (the microphone is never left open behind the learner's back). */
  active: boolean;
  /** Final words Deepgram heard: append them to the field. */
  onWords: (text: string) => void;
  /** What the field is, for labels: "message", "answer to problem 2". */
  fieldName: string;
  /** `floating` sits above the field (the composer); `inline` takes its own line (a problem). */
  variant: 'floating' | 'inline';
  testId?: string;
  /** Bumped by a mic button outside the bar (the composer's, shown before focus): start a dictation
   * once the field has focus. */
  startSignal?: number;
}

const STATUS: Record<DictationState, string> = {
  idle: '',
  starting: 'Connecting…',
  listening: 'Listening…',
  stopping: 'Finishing…',
  error: '',
};

/**
 * The dictation bar of one field: a microphone toggle, a level meter (local, from the microphone
 * stream) and what is being heard (interim words greyed; final words go into the field). Shown
 * only while its field has focus, and only when a Deepgram key is set.
 */
export default function DictationBar({ active, onWords, fieldName, variant, testId = 'dictation-bar', startSignal = 0 }: Props) {
  const available = useDictationAvailable();
  const [state, setState] = useState<DictationState>('idle');
  const [message, setMessage] = useState<string | null>(null);
  const [interim, setInterim] = useState('');
  const session = useRef<DictationSession | null>(null);
  const level = useRef<HTMLSpanElement>(null);
  const meter = useRef<HTMLSpanElement>(null);
  const words = useRef(onWords);
  words.current = onWords;

  const running = state === 'starting' || state === 'listening' || state === 'stopping';

  const start = useCallback(() => {
    setMessage(null);
    setInterim('');
    const s = new DictationSession(browserDeps(), {
      onState: (next, why) => {
        if (session.current !== s) return;
        setState(next);
        if (next === 'error') setMessage(why);
      },
      onInterim: (text) => session.current === s && setInterim(text),
      onFinal: (text) => words.current(text),
      onLevel: (value) => {
        // straight to the element: no React render per frame
        level.current?.style.setProperty('transform', `scaleX(${value.toFixed(3)})`);
        meter.current?.setAttribute('aria-valuenow', String(Math.round(value * 100)));
      },
    });
    session.current = s;
    void s.start();
  }, []);

  const stop = useCallback(() => session.current?.stop(), []);

  // The outside mic button: start once, when the field has the focus and dictation is offered.
  const handled = useRef(0);
  useEffect(() => {
    if (startSignal > handled.current && active && available && !running) {
      handled.current = startSignal;
      start();
    }
  }, [startSignal, active, available, running, start]);

  // Leaving the field stops the dictation; leaving the page (unmount) too.
  useEffect(() => {
    if (!active) session.current?.stop();
  }, [active]);
  useEffect(() => () => session.current?.stop(), []);
  // Escape stops a running dictation wherever the focus is in the field's container.
  useEffect(() => {
    if (!running) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') session.current?.stop();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [running]);

  if (!available || (!active && !running)) return null;

  const label = running ? `Stop dictating into the ${fieldName}` : `Dictate into the ${fieldName}`;
  return (
    <div className={`dictation-bar dictation-${variant}`} data-testid={testId} data-state={state} role="group" aria-label={`Dictation for the ${fieldName}`}>
      <button
        type="button"
        className={running ? 'dictation-mic dictation-mic-on' : 'dictation-mic'}
        data-testid="dictation-toggle"
        aria-pressed={running}
        aria-label={label}
        title={running ? 'Stop dictation (Escape)' : 'Dictate with Deepgram'}
        // keep the caret in the field: a mouse press does not move the focus to the button
        onMouseDown={(e) => e.preventDefault()}
        onClick={state === 'stopping' ? undefined : running ? stop : start}
        // not `disabled` while finishing: a disabled button would drop the keyboard focus
        aria-disabled={state === 'stopping' || undefined}
      >
        <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
          <path d="M12 15a3 3 0 0 0 3-3V6a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3Z" fill="currentColor" />
          <path d="M6 11a6 6 0 0 0 12 0M12 17v4M9 21h6" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
        </svg>
      </button>
      {running && (
        <span className="dictation-meter" ref={meter} role="meter" aria-label="Microphone level" aria-valuemin={0} aria-valuemax={100} aria-valuenow={0}>
          <span className="dictation-level" ref={level} />
        </span>
      )}
      <span className="dictation-status" aria-live="polite" data-testid="dictation-status">
        {message ?? STATUS[state]}
      </span>
      {interim && (
        <span className="dictation-interim" data-testid="dictation-interim">
          {interim}
        </span>
      )}
    </div>
  );
}
