// The first screen (issue 29, item 2): home, while no real teacher is set up, offers in this order
// a subscription sign-in (ChatGPT, GitHub Copilot, xAI), a pasted key (one test call says it works or
// why not, in plain words), a model server already running on this computer (its models picked per
// slot), and last the offline demo (/demo, which says plainly that it gets facts wrong). A choice
// that works is saved at once (the key, then the slots) and the screen says the teacher is ready.

import { useCallback, useEffect, useMemo, useState } from 'react';
import { Link } from 'react-router-dom';
import * as api from '../../api';
import { useAppState, useCreateLesson } from '../../appState';
import { describeError } from '../../core/errors';
import {
  DEFAULT_KEY_MODEL,
  DEFAULT_SUBSCRIPTION_MODEL,
  KEY_TEST_PROVIDERS,
  UNSET,
  askedWords,
  initialPicks,
  keyTestBody,
  localSlots,
  withStrong,
  type KeyTestProvider,
  type LocalServer,
  type LocalServers,
  type SlotPicks,
} from '../../core/machine_room/firstRun';
import { buildNotice } from '../../core/machine_room/offlineBuild';
import { bannerFor, modelPlaceholder, providerLabel } from '../../core/machine_room/settings';
import type { ModelRef, Settings, Slot } from '../../core/types';
import { desktopBridge, keysClient, plainKeyError } from './keysClient';
import ProviderSelect from './ProviderSelect';
import { SubscriptionRow } from './SubscriptionSettings';
import { SUBSCRIPTION_LABELS, SUBSCRIPTION_PROVIDERS, subscriptionsClient, type SubscriptionProvider } from './subscriptionsClient';
import { useSubscriptionStatus } from './useSubscriptionStatus';
import './firstRun.css';

/** Saves the slots and tells home the teacher is set up (with words for the confirmation). */
type Choose = (models: Record<Slot, ModelRef | null>, words: string) => Promise<void>;

interface Props {
  /** Set once a choice was saved: what now teaches, in words ("gpt-4o-mini via OpenAI"). */
  done: string | null;
  onDone: (words: string) => void;
}

export default function FirstRun({ done, onDone }: Props) {
  const { settings, setSettings } = useAppState();
  const choose: Choose = useCallback(
    async (models, words) => {
      setSettings(await api.putSettings({ models }));
      onDone(words);
    },
    [setSettings, onDone],
  );

  if (done !== null) return <Ready words={done} />;
  if (!settings) return null;
  const demo = bannerFor(settings)?.kind === 'offline';
  // while llama.cpp is built in the background (issue 29 item 1) the demo is on its way: say so
  // here rather than leave the fourth way missing (the new-user trial)
  const building = buildNotice(settings.offline);
  return (
    <div className="page page-narrow first-run" data-testid="first-run">
      <h1>Set up your teacher</h1>
      <p className="lead">Lessons are taught by a language model. Choose one of these ways to give the app one; each takes a minute or two.</p>
      <SubscriptionChoice settings={settings} choose={choose} />
      <KeyChoice settings={settings} choose={choose} />
      <LocalChoice choose={choose} />
      {demo && (
        <section className="card first-run-option" data-testid="first-run-demo">
          <h2>
            <span className="first-run-step">4</span> Or look at a demo
          </h2>
          <p className="muted">
            The app has a tiny offline model that shows how a lesson works. It gets facts wrong: do not learn from it.{' '}
            <Link to="/demo" data-testid="first-run-demo-link">
              About the demo
            </Link>
          </p>
        </section>
      )}
      {!demo && building?.kind === 'building' && (
        <section className="card first-run-option" data-testid="first-run-demo-building">
          <h2>
            <span className="first-run-step">4</span> Or, soon, look at a demo
          </h2>
          <p className="muted">
            A tiny offline demo model is being built on this computer and appears here when it is ready. It gets facts wrong: the three ways
            above give you a real teacher now. {building.line}
          </p>
        </section>
      )}
    </div>
  );
}

function Ready({ words }: { words: string }) {
  const { create, creating, error } = useCreateLesson();
  return (
    <div className="page page-narrow first-run" data-testid="first-run-ready">
      <h1>Your teacher is ready</h1>
      <p className="lead" data-testid="first-run-ready-words">
        Lessons now run on {words}. You can change it any time in <Link to="/settings">Settings</Link>.
      </p>
      <button type="button" className="btn btn-primary btn-large" data-testid="first-run-begin" onClick={() => void create()} disabled={creating}>
        {creating ? 'Starting…' : 'Begin a lesson'}
      </button>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

function Step({ n, title, children, testId }: { n: number; title: string; children: React.ReactNode; testId: string }) {
  return (
    <section className="card first-run-option" data-testid={testId}>
      <h2>
        <span className="first-run-step">{n}</span> {title}
      </h2>
      {children}
    </section>
  );
}

// ---------------------------------------------------------------------------
// 1. A subscription

function SubscriptionChoice({ settings, choose }: { settings: Settings; choose: Choose }) {
  const client = useMemo(() => subscriptionsClient(), []);
  const { status, setStatus, loadError } = useSubscriptionStatus(client);

  return (
    <Step n={1} title="Sign in with a subscription" testId="first-run-subscriptions">
      <p className="muted">Use a ChatGPT, GitHub Copilot or xAI subscription you already pay for: connect it, then choose it to teach.</p>
      {loadError && (
        <p className="error-text" role="alert">
          Could not read the subscription logins: {loadError}
        </p>
      )}
      {status &&
        SUBSCRIPTION_PROVIDERS.map((p) => (
          <div key={p} className="first-run-subscription">
            <SubscriptionRow provider={p} view={status.providers[p]} client={client} onStatus={setStatus} />
            {status.providers[p].state === 'connected' && <UseSubscription provider={p} settings={settings} choose={choose} />}
          </div>
        ))}
      {!status && !loadError && <p className="muted">Loading…</p>}
    </Step>
  );
}

function UseSubscription({ provider, settings, choose }: { provider: SubscriptionProvider; settings: Settings; choose: Choose }) {
  const [model, setModel] = useState(DEFAULT_SUBSCRIPTION_MODEL[provider] ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function use() {
    const m = model.trim();
    if (!m) {
      setError('Enter the model to use.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await choose(withStrong(settings.models, { provider, model: m }), `${m} via your ${SUBSCRIPTION_LABELS[provider]}`);
    } catch (err) {
      setError(describeError(err).detail);
      setBusy(false);
    }
  }
  return (
    <form
      className="first-run-row"
      onSubmit={(e) => {
        e.preventDefault();
        void use();
      }}
    >
      <label className="grow">
        <span>Model</span>
        <input type="text" value={model} onChange={(e) => setModel(e.target.value)} placeholder={modelPlaceholder(provider)} spellCheck={false} data-testid={`first-run-${provider}-model`} />
      </label>
      <button type="submit" className="btn btn-primary" disabled={busy} data-testid={`first-run-${provider}-use`}>
        Teach with it
      </button>
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

// ---------------------------------------------------------------------------
// 2. A pasted key

function KeyChoice({ settings, choose }: { settings: Settings; choose: Choose }) {
  const [provider, setProvider] = useState<KeyTestProvider>('openrouter');
  const [model, setModel] = useState(DEFAULT_KEY_MODEL.openrouter);
  const [baseUrl, setBaseUrl] = useState('');
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  const [result, setResult] = useState<{ works: boolean; detail: string } | null>(null);

  function pick(next: string) {
    const p = (KEY_TEST_PROVIDERS as readonly string[]).includes(next) ? (next as KeyTestProvider) : 'openrouter';
    setProvider(p);
    setModel(DEFAULT_KEY_MODEL[p]);
    setResult(null);
  }

  async function test() {
    const body = keyTestBody(provider, key, model, baseUrl);
    if (typeof body === 'string') {
      setResult({ works: false, detail: body });
      return;
    }
    setResult(null);
    setBusy('Testing the key…');
    try {
      const answer = await api.testKey(body);
      setResult(answer);
      if (!answer.works) return;
      setBusy('It works. Saving…');
      try {
        await keysClient(desktopBridge(), settings.keysOwner).setKey(provider, body.key);
      } catch (err) {
        setResult({ works: false, detail: `The key works, but it could not be stored: ${plainKeyError(err)}` });
        return;
      }
      await choose(withStrong(settings.models, body.slot), `${body.slot.model} via ${providerLabel(provider)}`);
    } catch (err) {
      setResult({ works: false, detail: describeError(err).detail });
    } finally {
      setBusy(null);
    }
  }

  return (
    <Step n={2} title="Paste an API key" testId="first-run-key">
      <p className="muted">Have a key from OpenRouter, OpenAI or another OpenAI-compatible service? The app makes one small test call with it, then keeps it.</p>
      <form
        className="first-run-key-form"
        onSubmit={(e) => {
          e.preventDefault();
          void test();
        }}
      >
        <div className="first-run-row">
          <label>
            <span>Provider</span>
            <ProviderSelect value={provider} onChange={pick} providers={KEY_TEST_PROVIDERS} data-testid="first-run-key-provider" />
          </label>
          <label className="grow">
            <span>Model</span>
            <input type="text" value={model} onChange={(e) => setModel(e.target.value)} placeholder={modelPlaceholder(provider)} spellCheck={false} autoComplete="off" data-testid="first-run-key-model" />
          </label>
        </div>
        {provider === 'openai-compatible' && (
          <label className="block">
            <span>Server address</span>
            <input type="url" value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} placeholder="https://api.example.com/v1" spellCheck={false} autoComplete="off" data-testid="first-run-key-baseurl" />
          </label>
        )}
        <div className="first-run-row">
          <label className="grow">
            <span>API key</span>
            <input type="password" value={key} onChange={(e) => setKey(e.target.value)} placeholder="Paste your API key" spellCheck={false} autoComplete="off" data-testid="first-run-key-input" />
          </label>
          <button type="submit" className="btn btn-primary" disabled={busy !== null} data-testid="first-run-key-test">
            Test the key
          </button>
        </div>
      </form>
      {busy && (
        <p className="muted" role="status" data-testid="first-run-key-busy">
          {busy}
        </p>
      )}
      {result && (
        <p className={result.works ? 'notice' : 'error-text'} role={result.works ? 'status' : 'alert'} data-testid="first-run-key-result">
          {result.detail}
        </p>
      )}
    </Step>
  );
}

// ---------------------------------------------------------------------------
// 3. A model server on this computer

function LocalChoice({ choose }: { choose: Choose }) {
  const [found, setFound] = useState<LocalServers | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [looking, setLooking] = useState(false);
  const look = useCallback(async () => {
    setLooking(true);
    setError(null);
    try {
      setFound(await api.getLocalServers());
    } catch (err) {
      setError(describeError(err).detail);
    } finally {
      setLooking(false);
    }
  }, []);
  useEffect(() => {
    void look();
  }, [look]);

  return (
    <Step n={3} title="Use a model server on this computer" testId="first-run-local">
      <p className="muted">Ollama, LM Studio, llama.cpp’s server, vLLM or Jan, if one already runs here: the app asks their usual ports.</p>
      {looking && !found && <p className="muted">Looking…</p>}
      {error && (
        <p className="error-text" role="alert">
          Could not look for model servers: {error}
        </p>
      )}
      {found && found.servers.length === 0 && (
        <p data-testid="first-run-local-none">
          No model server answered on this computer. Asked {askedWords(found.asked) || 'no port'}. Start one, then look again.
        </p>
      )}
      {found?.servers.map((server) => <LocalServerCard key={server.key} server={server} choose={choose} />)}
      <button type="button" className="btn btn-small" onClick={() => void look()} disabled={looking} data-testid="first-run-local-again">
        {looking ? 'Looking…' : 'Look again'}
      </button>
    </Step>
  );
}

const SLOT_PICKS: { slot: Slot; label: string; unset: string | null }[] = [
  { slot: 'strong', label: 'Teacher (strong model)', unset: null },
  { slot: 'cheap', label: 'Helper tasks (cheap model)', unset: 'Same as the teacher' },
  { slot: 'vision', label: 'Reading images (vision model)', unset: 'Not set' },
];

function LocalServerCard({ server, choose }: { server: LocalServer; choose: Choose }) {
  const [picks, setPicks] = useState<SlotPicks>(() => initialPicks(server));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const slots = localSlots(server, picks);

  async function use() {
    if (!slots) return;
    setBusy(true);
    setError(null);
    try {
      await choose(slots, `${picks.strong} on ${server.name}`);
    } catch (err) {
      setError(describeError(err).detail);
      setBusy(false);
    }
  }

  return (
    <div className="first-run-server" data-testid={`first-run-server-${server.key}`}>
      <div className="first-run-server-head">
        <strong>{server.name}</strong> <span className="muted small">port {server.port}</span>
      </div>
      {server.models.length === 0 ? (
        <p className="muted" data-testid={`first-run-server-${server.key}-empty`}>
          It runs but lists no models: download or load one in {server.name}, then look again.
        </p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void use();
          }}
        >
          <div className="first-run-row">
            {SLOT_PICKS.map(({ slot, label, unset }) => (
              <label key={slot} className="grow">
                <span>{label}</span>
                <select value={picks[slot]} onChange={(e) => setPicks((p) => ({ ...p, [slot]: e.target.value }))} data-testid={`first-run-server-${server.key}-${slot}`}>
                  {unset !== null && <option value={UNSET}>{unset}</option>}
                  {server.models.map((m) => (
                    <option key={m} value={m}>
                      {m}
                    </option>
                  ))}
                </select>
              </label>
            ))}
          </div>
          <button type="submit" className="btn btn-primary" disabled={busy || !slots} data-testid={`first-run-server-${server.key}-use`}>
            Teach with {server.name}
          </button>
        </form>
      )}
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
