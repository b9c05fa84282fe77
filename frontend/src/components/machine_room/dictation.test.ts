import { describe, expect, it } from 'vitest';
import { ApiError } from '../../core/errors';
import {
  appendWords,
  CHUNK_MS,
  CLOSE_GRACE_MS,
  DictationSession,
  levelOf,
  microphoneProblem,
  readResult,
  type DictationDeps,
  type DictationState,
  type DictationToken,
  type RecorderLike,
  type SocketLike,
} from './dictation';

// ---------------------------------------------------------------------------
// Fakes of what the browser provides: a socket, a recorder, a microphone, a meter, timers.

class FakeSocket implements SocketLike {
  readyState = 0;
  binaryType = 'blob';
  onopen: SocketLike['onopen'] = null;
  onmessage: SocketLike['onmessage'] = null;
  onerror: SocketLike['onerror'] = null;
  onclose: SocketLike['onclose'] = null;
  sent: (Blob | string)[] = [];
  closedWith: number | null = null;
  constructor(
    readonly url: string,
    readonly protocols: string[],
  ) {}
  send(data: Blob | string): void {
    if (this.readyState !== 1) throw new Error('send on a socket that is not open');
    this.sent.push(data);
  }
  close(code = 1000): void {
    if (this.readyState >= 2) return;
    this.readyState = 2;
    this.closedWith = code;
  }
  // what Deepgram does
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
  say(text: string, isFinal: boolean): void {
    this.onmessage?.({ data: JSON.stringify({ type: 'Results', channel: { alternatives: [{ transcript: text }] }, is_final: isFinal }) });
  }
  hangUp(code: number): void {
    this.readyState = 3;
    this.onclose?.({ code });
  }
}

class FakeRecorder implements RecorderLike {
  state = 'inactive';
  ondataavailable: RecorderLike['ondataavailable'] = null;
  onstop: RecorderLike['onstop'] = null;
  timeslice: number | null = null;
  start(timesliceMs: number): void {
    this.state = 'recording';
    this.timeslice = timesliceMs;
  }
  chunk(bytes: number): void {
    this.ondataavailable?.({ data: new Blob([new Uint8Array(bytes)]) });
  }
  stop(): void {
    if (this.state === 'inactive') return;
    this.state = 'inactive';
    this.chunk(3); // the last chunk, then the stop event
    this.onstop?.({});
  }
}

interface Rig {
  deps: DictationDeps;
  sockets: FakeSocket[];
  recorders: FakeRecorder[];
  tracksStopped: number;
  meterClosed: number;
  framesStopped: number;
  frame: () => void;
  timers: { fn: () => void; ms: number; cancelled: boolean }[];
  states: [DictationState, string | null][];
  interim: string[];
  finals: string[];
  levels: number[];
  session: DictationSession;
}

const TOKEN: DictationToken = { token: 'jwt.abc', expiresIn: 30, websocketUrl: 'wss://api.deepgram.com/v1/listen?model=nova-3' };

function rig(options: { microphone?: () => Promise<never>; token?: () => Promise<DictationToken> } = {}): Rig {
  const r = {
    sockets: [] as FakeSocket[],
    recorders: [] as FakeRecorder[],
    tracksStopped: 0,
    meterClosed: 0,
    framesStopped: 0,
    frame: () => {},
    timers: [] as Rig['timers'],
    states: [] as Rig['states'],
    interim: [] as string[],
    finals: [] as string[],
    levels: [] as number[],
  } as Rig;
  let level = 0.5;
  r.deps = {
    getMicrophone: options.microphone ?? (async () => ({ getTracks: () => [{ stop: () => void r.tracksStopped++ }] })),
    fetchToken: options.token ?? (async () => TOKEN),
    openSocket: (url, protocols) => {
      const s = new FakeSocket(url, protocols);
      r.sockets.push(s);
      return s;
    },
    record: () => {
      const rec = new FakeRecorder();
      r.recorders.push(rec);
      return rec;
    },
    meter: () => ({
      read: () => (level = level === 0.5 ? 0.25 : 0.5),
      close: () => void r.meterClosed++,
    }),
    everyFrame: (tick) => {
      r.frame = tick;
      return () => void r.framesStopped++;
    },
    setTimer: (fn, ms) => {
      const t = { fn, ms, cancelled: false };
      r.timers.push(t);
      return () => void (t.cancelled = true);
    },
  };
  r.session = new DictationSession(r.deps, {
    onState: (s, m) => r.states.push([s, m]),
    onInterim: (t) => r.interim.push(t),
    onFinal: (t) => r.finals.push(t),
    onLevel: (l) => r.levels.push(l),
  });
  return r;
}

const names = (r: Rig) => r.states.map(([s]) => s);

describe('a dictation', () => {
  it('opens the socket with the minted token as the bearer subprotocol, sends chunks, shows interim and appends finals', async () => {
    const r = rig();
    await r.session.start();
    expect(names(r)).toEqual(['starting']);
    const [socket] = r.sockets;
    expect(socket.url).toBe(TOKEN.websocketUrl);
    expect(socket.protocols).toEqual(['bearer', 'jwt.abc']);
    expect(r.recorders).toHaveLength(0); // nothing is recorded before the socket is open
    socket.open();
    expect(names(r)).toEqual(['starting', 'listening']);
    const [recorder] = r.recorders;
    expect(recorder.timeslice).toBe(CHUNK_MS);
    recorder.chunk(100);
    recorder.chunk(0); // empty chunks are not sent
    expect(socket.sent).toHaveLength(1);
    expect(socket.sent[0]).toBeInstanceOf(Blob);

    socket.say('the derivative', false);
    socket.say('the derivative of x', false);
    socket.say('The derivative of x squared.', true);
    socket.onmessage?.({ data: JSON.stringify({ type: 'Metadata', request_id: 'r' }) });
    socket.onmessage?.({ data: 'not json' });
    socket.say('', true); // a final with no words appends nothing
    expect(r.interim).toEqual(['the derivative', 'the derivative of x', '', '']);
    expect(r.finals).toEqual(['The derivative of x squared.']);

    // the meter reads the local analyser once per frame
    r.frame();
    r.frame();
    expect(r.levels).toEqual([0.25, 0.5]);
  });

  it('stop sends the last chunk, then CloseStream, and waits for the last results before it is idle', async () => {
    const r = rig();
    await r.session.start();
    const [socket] = r.sockets;
    socket.open();
    r.session.stop();
    expect(r.session.state).toBe('stopping');
    expect(socket.sent.at(-2)).toBeInstanceOf(Blob); // the recorder's last chunk
    expect(socket.sent.at(-1)).toBe(JSON.stringify({ type: 'CloseStream' }));
    expect(r.tracksStopped).toBe(1); // the microphone is off at once
    expect(r.meterClosed).toBe(1);
    expect(r.framesStopped).toBe(1);
    expect(r.levels.at(-1)).toBe(0);
    // Deepgram's last words still arrive and are appended
    socket.say('last words', true);
    expect(r.finals).toEqual(['last words']);
    socket.hangUp(1000);
    expect(names(r)).toEqual(['starting', 'listening', 'stopping', 'idle']);
    expect(r.timers).toHaveLength(1);
    expect(r.timers[0].cancelled).toBe(true);
  });

  it('closes the socket itself when Deepgram does not close it within the grace period', async () => {
    const r = rig();
    await r.session.start();
    r.sockets[0].open();
    r.session.stop();
    expect(r.timers[0].ms).toBe(CLOSE_GRACE_MS);
    r.timers[0].fn();
    expect(r.sockets[0].closedWith).toBe(1000);
  });

  it('says in plain words when the server has no Deepgram key, and turns the microphone off', async () => {
    const detail = 'Add a Deepgram key in Settings to dictate.';
    const r = rig({
      token: async () => {
        throw new ApiError(409, JSON.stringify({ error: 'dictation_no_key', detail }));
      },
    });
    await r.session.start();
    expect(r.states.at(-1)).toEqual(['error', detail]);
    expect(r.sockets).toHaveLength(0);
    expect(r.tracksStopped).toBe(1);
    expect(r.meterClosed).toBe(1);
  });

  it('passes on the server sentence for a key Deepgram refused', async () => {
    const detail = 'Deepgram refused the key (it answered 401). Check the Deepgram key in Settings.';
    const r = rig({
      token: async () => {
        throw new ApiError(422, JSON.stringify({ error: 'dictation_key_refused', detail }));
      },
    });
    await r.session.start();
    expect(r.states.at(-1)).toEqual(['error', detail]);
  });

  it('names a refused microphone', async () => {
    const r = rig({
      microphone: async () => {
        throw Object.assign(new Error('denied'), { name: 'NotAllowedError' });
      },
    });
    await r.session.start();
    expect(r.states).toEqual([
      ['starting', null],
      ['error', 'Microphone access was refused. Allow the microphone for this app to dictate.'],
    ]);
    expect(microphoneProblem({ name: 'NotFoundError' })).toMatch(/No microphone/);
    expect(microphoneProblem(new Error('x'))).toBe('The microphone could not be opened.');
  });

  it('a socket Deepgram closes before it opens is a refused connection; a drop while listening says so', async () => {
    const r = rig();
    await r.session.start();
    r.sockets[0].hangUp(1006);
    expect(r.states.at(-1)?.[0]).toBe('error');
    expect(r.states.at(-1)?.[1]).toMatch(/^Deepgram refused the dictation connection/);
    expect(r.tracksStopped).toBe(1);

    const d = rig();
    await d.session.start();
    d.sockets[0].open();
    d.sockets[0].hangUp(1011);
    expect(d.states.at(-1)).toEqual(['error', 'Dictation stopped: the connection to Deepgram closed (code 1011).']);
    expect(d.recorders[0].state).toBe('inactive');
    expect(d.tracksStopped).toBe(1);
  });

  it('stop while the token is being fetched opens no socket and leaves the microphone off', async () => {
    let release: (t: DictationToken) => void = () => {};
    const r = rig({ token: () => new Promise((resolve) => (release = resolve)) });
    const started = r.session.start();
    await Promise.resolve();
    await Promise.resolve();
    r.session.stop();
    release(TOKEN);
    await started;
    expect(r.sockets).toHaveLength(0);
    expect(r.session.state).toBe('idle');
    expect(r.tracksStopped).toBe(1);
  });

  it('stop while the socket connects records nothing and closes the stream once it opens', async () => {
    const r = rig();
    await r.session.start();
    r.session.stop();
    const [socket] = r.sockets;
    socket.open();
    expect(r.recorders).toHaveLength(0);
    expect(socket.sent).toEqual([JSON.stringify({ type: 'CloseStream' })]);
    socket.hangUp(1000);
    expect(r.session.state).toBe('idle');
  });

  it('a session is used once', async () => {
    const r = rig();
    await r.session.start();
    r.sockets[0].open();
    r.session.stop();
    r.sockets[0].hangUp(1000);
    await r.session.start();
    expect(r.sockets).toHaveLength(1);
  });
});

describe('dictation helpers', () => {
  it('reads the transcript of a Results message only', () => {
    const msg = (o: unknown) => JSON.stringify(o);
    expect(readResult(msg({ type: 'Results', channel: { alternatives: [{ transcript: ' hi ' }] }, is_final: true }))).toEqual({ text: 'hi', isFinal: true });
    expect(readResult(msg({ channel: { alternatives: [{ transcript: 'x' }] } }))).toEqual({ text: 'x', isFinal: false });
    expect(readResult(msg({ type: 'UtteranceEnd' }))).toBeNull();
    expect(readResult(msg({ type: 'Results', channel: {} }))).toBeNull();
    expect(readResult('{')).toBeNull();
    expect(readResult(new ArrayBuffer(2))).toBeNull();
    expect(readResult('null')).toBeNull();
  });

  it('appends words with one space between', () => {
    expect(appendWords('', 'Hello.')).toBe('Hello.');
    expect(appendWords('I think', 'it is two.')).toBe('I think it is two.');
    expect(appendWords('Line one\n', 'line two')).toBe('Line one\nline two');
    expect(appendWords('x', '   ')).toBe('x');
  });

  it('measures silence as zero and a loud signal as full', () => {
    expect(levelOf(new Uint8Array(64).fill(128))).toBe(0);
    expect(levelOf(new Uint8Array([0, 255, 0, 255]))).toBe(1);
    const quiet = levelOf(new Uint8Array([120, 136, 120, 136]));
    expect(quiet).toBeGreaterThan(0);
    expect(quiet).toBeLessThan(0.5);
    expect(levelOf([])).toBe(0);
  });
});
