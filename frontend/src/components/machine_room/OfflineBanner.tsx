import { useEffect, type ReactNode } from 'react';
import { Link } from 'react-router-dom';
import { useAppState } from '../../appState';
import { demoWaitLine } from '../../core/machine_room/demo';
import { BUILD_POLL_MS, buildNotice, buildRunning, problemsWhileBuilding } from '../../core/machine_room/offlineBuild';
import { bannerFor } from '../../core/machine_room/settings';
import { useNarrow } from '../useNarrow';
import './offlineBanner.css';

/** Where "add your own API key in Settings" leads: the API keys section (a new user landed at the
 * top of Settings, on the model slots, and had to look for the keys). */
const KEYS_LINK = '/settings#api-keys';

/** Shown on every page while llama.cpp for the offline model is built in the background (issue 29),
 * above the banner below: its progress in the server's words, asked for every few seconds. */
export default function OfflineBanner() {
  const { settings, refreshSettings } = useAppState();
  const notice = buildNotice(settings?.offline);
  const running = buildRunning(settings?.offline);
  useEffect(() => {
    if (!running) return;
    const timer = window.setInterval(() => void refreshSettings(), BUILD_POLL_MS);
    return () => window.clearInterval(timer);
  }, [running, refreshSettings]);
  let build: ReactNode = null;
  if (notice?.kind === 'building') {
    build = (
      <div className="banner banner-info" role="status" data-testid="offline-build">
        {notice.line} Meanwhile a subscription, an API key or a model server on this computer works now: set one
        up in <Link to="/settings">Settings</Link>.
      </div>
    );
  } else if (notice) {
    build = (
      <div className="banner banner-warn" role="status" data-testid="offline-build">
        {notice.line} Lessons can still run on a subscription, an API key or a model server on this computer (
        <Link to="/settings">Settings</Link>); <code>make run</code> tries the build again next time.
      </div>
    );
  }
  return (
    <>
      {build}
      <ModelBanner building={running} />
    </>
  );
}

/** Shown on every page when lessons would run on the offline demo model, or cannot run at all. */
function ModelBanner({ building }: { building: boolean }) {
  const { settings, settingsError, chats } = useAppState();
  const banner = bannerFor(settings);
  // while a lesson on the demo model runs: its expected wait, from its speed measured here (issue 29)
  const writing = (chats ?? []).some((c) => c.running === true && c.model?.provider === 'local');
  const waitLine = banner?.kind === 'offline' ? demoWaitLine(settings?.offline, writing) : null;
  const wait = waitLine && (
    <span className="demo-wait" data-testid="demo-wait">
      {' '}
      {waitLine}
    </span>
  );
  // On a phone the demo-model notice is a one-line chip that opens on demand, so the page keeps its room.
  const narrow = useNarrow();

  if (!settings && settingsError) {
    return (
      <div className="banner banner-warn" role="status" data-testid="settings-unavailable">
        Could not load settings: {settingsError}
      </div>
    );
  }
  if (!banner) return null;
  const problems = banner.kind === 'problems' ? problemsWhileBuilding(banner.problems, building) : [];
  if (banner.kind === 'problems' && problems.length === 0) return null; // the build's notice says it all
  if (banner.kind === 'offline' && banner.error) {
    return (
      <div className="banner banner-warn" role="status" data-testid="offline-banner">
        <strong>The offline demo model is not working:</strong> {banner.error}. Send your message again to retry,
        or add your own API key in <Link to={KEYS_LINK}>Settings</Link>.
      </div>
    );
  }
  if (banner.kind === 'offline' && banner.crash) {
    return (
      <div className="banner banner-warn" role="status" data-testid="offline-banner">
        <strong>The offline demo model failed during your last turn:</strong> {banner.crash}. It was restarted: send
        your message again, or add your own API key in <Link to={KEYS_LINK}>Settings</Link>.
      </div>
    );
  }
  if (banner.kind === 'offline' && narrow) {
    return (
      <details className="banner banner-info banner-chip" data-testid="offline-banner">
        <summary>Offline demo model: weak answers</summary>
        You are using a tiny offline demo model ({banner.model}). Add your own API key in <Link to={KEYS_LINK}>Settings</Link>{' '}
        for real lessons.{wait}
      </details>
    );
  }
  if (banner.kind === 'offline') {
    return (
      <div className="banner banner-info" role="status" data-testid="offline-banner">
        You are using a tiny offline demo model ({banner.model}). Its answers will be weak. Add your own API key in{' '}
        <Link to={KEYS_LINK}>Settings</Link> for real lessons.{wait}
      </div>
    );
  }
  return (
    <div className="banner banner-warn" role="status" data-testid="offline-banner">
      <strong>No model can run lessons right now.</strong>
      <ul>
        {problems.map((p, i) => (
          <li key={i}>{p}</li>
        ))}
      </ul>
      Fix this in <Link to="/settings">Settings</Link>.
    </div>
  );
}
