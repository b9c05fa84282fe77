// Dictation (issue 19; seed README "Dictation"): the microphone streams from the browser to
// Deepgram over a WebSocket, never through the server. The server only mints a short-lived token
// (POST /api/dictation/token -> {token, expiresIn, websocketUrl}); the socket authenticates with
// the WebSocket subprotocol ['bearer', token] (browsers cannot set an Authorization header on a
// socket). MediaRecorder sends WebM/Opus chunks every CHUNK_MS; Deepgram answers `Results`
// messages: interim ones are shown greyed, final ones are appended to the field. The level
// meter is an AnalyserNode on the same stream, local only.
//
// Everything the browser provides arrives through `DictationDeps`, so the session runs under
// vitest with a fake socket, recorder and microphone (`browserDeps()` is the real wiring).

import { ApiError, describeError } from '../../core/errors';

export const CHUNK_MS = 250;
/** How long to wait for Deepgram's last results after CloseStream before closing the socket. */
export const CLOSE_GRACE_MS = 4000;

export interface DictationToken {
  token: string;
  expiresIn: number;
  websocketUrl: string;
}

export type DictationState = 'idle' | 'starting' | 'listening' | 'stopping' | 'error';

/** The parts of a WebSocket the session uses. */
export interface SocketLike {
  readonly readyState: number;
  binaryType: string;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onclose: ((event: { code: number; reason?: string }) => void) | null;
  send(data: Blob | string): void;
  close(code?: number, reason?: string): void;
}

/** The parts of a MediaRecorder the session uses. */
export interface RecorderLike {
  readonly state: string;
  ondataavailable: ((event: { data: Blob }) => void) | null;
  onstop: ((event: unknown) => void) | null;
  start(timesliceMs: number): void;
  stop(): void;
}

/** The parts of a MediaStream the session uses. */
export interface StreamLike {
  getTracks(): { stop(): void }[];
}

/** A level source: `read()` is the current input level in 0..1; `close()` frees it. */
export interface LevelSource {
  read(): number;
  close(): void;
}

export interface DictationDeps {
  getMicrophone(): Promise<StreamLike>;
  fetchToken(): Promise<DictationToken>;
  openSocket(url: string, protocols: string[]): SocketLike;
  record(stream: StreamLike): RecorderLike;
  /** A level meter on the stream, or null where there is none (tests, no AudioContext). */
  meter(stream: StreamLike): LevelSource | null;
  /** Calls `tick` about once per frame until the returned function is called. */
  everyFrame(tick: () => void): () => void;
  setTimer(fn: () => void, ms: number): () => void;
}

export interface DictationEvents {
  onState(state: DictationState, message: string | null): void;
  /** The words heard so far that may still change ('' clears them). */
  onInterim(text: string): void;
  /** Words Deepgram will not change: append them to the field. */
  onFinal(text: string): void;
  onLevel(level: number): void;
}

const OPEN = 1;

/** The transcript of a Deepgram listen message, or null for anything else (metadata, events). */
export function readResult(data: unknown): { text: string; isFinal: boolean } | null {
  if (typeof data !== 'string') return null;
  let msg: unknown;
  try {
    msg = JSON.parse(data);
  } catch {
    return null;
  }
  if (typeof msg !== 'object' || msg === null) return null;
  const m = msg as Record<string, unknown>;
  if (m.type !== undefined && m.type !== 'Results') return null;
  const channel = m.channel as { alternatives?: { transcript?: unknown }[] } | undefined;
  const text = channel?.alternatives?.[0]?.transcript;
  if (typeof text !== 'string') return null;
  return { text: text.trim(), isFinal: m.is_final === true };
}

/** `current` with `addition` appended as words: one space between them unless `current` is empty
 * or already ends in whitespace. */
export function appendWords(current: string, addition: string): string {
  const words = addition.trim();
  if (!words) return current;
  if (!current || /\s$/.test(current)) return current + words;
  return `${current} ${words}`;
}

/** RMS level of 8-bit time-domain samples (128 = silence), scaled so speech fills the meter. */
export function levelOf(samples: ArrayLike<number>): number {
  if (!samples.length) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) {
    const v = (samples[i] - 128) / 128;
    sum += v * v;
  }
  return Math.min(1, Math.sqrt(sum / samples.length) * 4);
}

/** A sentence for a failed microphone request. */
export function microphoneProblem(err: unknown): string {
  const name = typeof err === 'object' && err !== null && 'name' in err ? String((err as { name: unknown }).name) : '';
  if (name === 'NotAllowedError' || name === 'SecurityError') return 'Microphone access was refused. Allow the microphone for this app to dictate.';
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return 'No microphone was found. Connect one to dictate.';
  if (name === 'NotReadableError') return 'The microphone is in use by another program or could not be opened.';
  return 'The microphone could not be opened.';
}

/** One dictation: start() opens the microphone and the socket, stop() ends both (the last words
 * still arrive). A session is used once. */
export class DictationSession {
  state: DictationState = 'idle';
  private stream: StreamLike | null = null;
  private socket: SocketLike | null = null;
  private recorder: RecorderLike | null = null;
  private level: LevelSource | null = null;
  private stopFrames: (() => void) | null = null;
  private cancelGrace: (() => void) | null = null;
  private stopRequested = false;
  private used = false;

  constructor(
    private readonly deps: DictationDeps,
    private readonly events: DictationEvents,
  ) {}

  private set(state: DictationState, message: string | null = null): void {
    this.state = state;
    this.events.onState(state, message);
  }

  async start(): Promise<void> {
    if (this.used) return;
    this.used = true;
    this.set('starting');
    try {
      this.stream = await this.deps.getMicrophone();
    } catch (err) {
      this.fail(microphoneProblem(err));
      return;
    }
    if (this.stopRequested) return this.release('idle');
    this.level = this.deps.meter(this.stream);
    if (this.level) {
      const level = this.level;
      this.stopFrames = this.deps.everyFrame(() => this.events.onLevel(level.read()));
    }
    let token: DictationToken;
    try {
      token = await this.deps.fetchToken();
    } catch (err) {
      this.fail(describeError(err).detail);
      return;
    }
    if (this.stopRequested) return this.release('idle');
    let socket: SocketLike;
    try {
      socket = this.deps.openSocket(token.websocketUrl, ['bearer', token.token]);
    } catch {
      this.fail('The dictation address Deepgram gave is not usable.');
      return;
    }
    this.socket = socket;
    socket.binaryType = 'arraybuffer';
    let opened = false;
    socket.onopen = () => {
      opened = true;
      if (this.stopRequested) {
        socket.send(JSON.stringify({ type: 'CloseStream' })); // stopped while connecting
        return;
      }
      const recorder = this.deps.record(this.stream!);
      this.recorder = recorder;
      recorder.ondataavailable = (e) => {
        if (e.data.size > 0 && socket.readyState === OPEN) socket.send(e.data);
      };
      recorder.onstop = () => {
        // the last chunk went out in the dataavailable before this: ask for the last results
        if (socket.readyState === OPEN) socket.send(JSON.stringify({ type: 'CloseStream' }));
      };
      recorder.start(CHUNK_MS);
      this.set('listening');
    };
    socket.onmessage = (e) => {
      const result = readResult(e.data);
      if (!result) return;
      if (result.isFinal) {
        this.events.onInterim('');
        if (result.text) this.events.onFinal(result.text);
      } else {
        this.events.onInterim(result.text);
      }
    };
    socket.onerror = () => {
      // the close event that follows says what happened
    };
    socket.onclose = (e) => {
      this.socket = null;
      this.events.onInterim('');
      if (this.state === 'stopping' || this.stopRequested) return this.release('idle');
      if (!opened) return this.fail('Deepgram refused the dictation connection. Check the Deepgram key in Settings and try again.');
      this.fail(`Dictation stopped: the connection to Deepgram closed${e.code && e.code !== 1000 ? ` (code ${e.code})` : ''}.`);
    };
  }

  /** End the dictation: stop recording, let Deepgram send its last results, then close. */
  stop(): void {
    if (this.state === 'idle' || this.state === 'error' || this.state === 'stopping') return;
    this.stopRequested = true;
    if (this.state === 'starting' && !this.socket) return; // start() notices and releases
    this.finish();
  }

  private finish(): void {
    const socket = this.socket;
    const recorder = this.recorder;
    this.set('stopping');
    if (recorder && recorder.state !== 'inactive') {
      recorder.stop(); // dataavailable, then onstop sends CloseStream
    } else if (socket && socket.readyState === OPEN) {
      socket.send(JSON.stringify({ type: 'CloseStream' }));
    }
    this.stopMicrophone();
    if (socket) {
      this.cancelGrace = this.deps.setTimer(() => socket.close(1000, 'done'), CLOSE_GRACE_MS);
    } else {
      this.release('idle');
    }
  }

  private fail(message: string): void {
    this.stopRequested = true;
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.onclose = null;
      try {
        socket.close(1000, 'failed');
      } catch {
        // already closed
      }
    }
    this.release('error', message);
  }

  private stopMicrophone(): void {
    this.stopFrames?.();
    this.stopFrames = null;
    this.level?.close();
    this.level = null;
    this.events.onLevel(0);
    if (this.recorder && this.recorder.state !== 'inactive') this.recorder.stop();
    for (const track of this.stream?.getTracks() ?? []) track.stop();
    this.stream = null;
  }

  private release(state: DictationState, message: string | null = null): void {
    this.cancelGrace?.();
    this.cancelGrace = null;
    this.stopMicrophone();
    this.set(state, message);
  }
}

// ---------------------------------------------------------------------------
// The browser's wiring.

/** POST /api/dictation/token; throws ApiError with the server's plain-words refusal. */
export async function fetchDictationToken(): Promise<DictationToken> {
  const res = await fetch('/api/dictation/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: '{}',
  });
  const text = await res.text();
  if (!res.ok) throw new ApiError(res.status, text);
  const body = JSON.parse(text) as Partial<DictationToken>;
  if (typeof body.token !== 'string' || typeof body.websocketUrl !== 'string') {
    throw new Error('The server sent no dictation token; try again.');
  }
  return { token: body.token, expiresIn: Number(body.expiresIn) || 30, websocketUrl: body.websocketUrl };
}

/** Whether this browser can dictate at all (microphone, recorder, sockets). */
export function canDictate(): boolean {
  return (
    typeof navigator !== 'undefined' &&
    !!navigator.mediaDevices?.getUserMedia &&
    typeof MediaRecorder !== 'undefined' &&
    typeof WebSocket !== 'undefined'
  );
}

function analyserMeter(stream: StreamLike): LevelSource | null {
  const Ctx = typeof AudioContext !== 'undefined' ? AudioContext : null;
  if (!Ctx) return null;
  try {
    const ctx = new Ctx();
    const source = ctx.createMediaStreamSource(stream as MediaStream);
    const analyser = ctx.createAnalyser();
    analyser.fftSize = 512;
    source.connect(analyser); // not to the destination: nothing is played back
    const samples = new Uint8Array(analyser.fftSize);
    return {
      read() {
        analyser.getByteTimeDomainData(samples);
        return levelOf(samples);
      },
      close() {
        source.disconnect();
        void ctx.close();
      },
    };
  } catch {
    return null;
  }
}

export function browserDeps(fetchToken: () => Promise<DictationToken> = fetchDictationToken): DictationDeps {
  return {
    getMicrophone: () => navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } }),
    fetchToken,
    openSocket: (url, protocols) => new WebSocket(url, protocols) as unknown as SocketLike,
    record: (stream) => {
      const type = ['audio/webm;codecs=opus', 'audio/webm', 'audio/ogg;codecs=opus'].find((t) => MediaRecorder.isTypeSupported(t));
      return new MediaRecorder(stream as MediaStream, type ? { mimeType: type } : undefined) as unknown as RecorderLike;
    },
    meter: analyserMeter,
    everyFrame(tick) {
      let id = requestAnimationFrame(function loop() {
        tick();
        id = requestAnimationFrame(loop);
      });
      return () => cancelAnimationFrame(id);
    },
    setTimer(fn, ms) {
      const id = window.setTimeout(fn, ms);
      return () => window.clearTimeout(id);
    },
  };
}
