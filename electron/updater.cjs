'use strict';
/**
 * Auto-update from the project's GitHub Releases through electron-updater (issue 19, item 5).
 *
 * electron-builder writes `resources/app-update.yml` (provider github, owner, repo) into a packaged
 * app, and the release job uploads `latest.yml` / `latest-mac.yml` / `latest-linux.yml` beside the
 * installers; electron-updater reads the newest release's manifest, downloads the installer for
 * this OS and architecture, checks its sha512, notifies, and installs when the app quits.
 *
 * startAutoUpdate({app, log, env, loadUpdater, intervalMs}) -> {stop(), check()} | null
 *   - off (returns null, logs why) when the app is not packaged (development, `electron .`), when
 *     env.LH_NO_UPDATE === '1', or when electron-updater cannot be loaded;
 *   - otherwise checks once now and every `intervalMs` (default 6 h; the timer does not keep the
 *     app alive); every failure (offline, no release yet, an unsigned macOS app that Squirrel
 *     refuses, a bad manifest) is logged as one line and never thrown: the app goes on as it is.
 * `loadUpdater` returns the autoUpdater (default: require('electron-updater').autoUpdater, loaded
 * lazily so that development runs never touch it); tests pass a fake.
 */

const DEFAULT_INTERVAL_MS = 6 * 60 * 60 * 1000;

function describe(error) {
  if (error && typeof error.message === 'string') return error.message.split('\n')[0];
  return String(error);
}

function startAutoUpdate({
  app,
  log,
  env = process.env,
  loadUpdater = () => require('electron-updater').autoUpdater,
  intervalMs = DEFAULT_INTERVAL_MS,
}) {
  if (!app.isPackaged) {
    log('auto-update: off (not a packaged app)');
    return null;
  }
  if (env.LH_NO_UPDATE === '1') {
    log('auto-update: off (LH_NO_UPDATE=1)');
    return null;
  }
  let updater;
  try {
    updater = loadUpdater();
  } catch (error) {
    log(`auto-update: off (electron-updater could not be loaded: ${describe(error)})`);
    return null;
  }
  updater.logger = {
    info: (message) => log(`auto-update: ${message}`),
    warn: (message) => log(`auto-update: warning: ${message}`),
    error: (message) => log(`auto-update: error: ${describe(message)}`),
    debug: () => {},
  };
  updater.on('error', (error) => log(`auto-update: failed: ${describe(error)}`));
  updater.on('update-downloaded', (info) =>
    log(`auto-update: version ${info && info.version} downloaded; it installs when the app quits`),
  );

  let checking = null;
  function check() {
    if (checking) return checking;
    let pending;
    try {
      pending = Promise.resolve(updater.checkForUpdatesAndNotify());
    } catch (error) {
      pending = Promise.reject(error);
    }
    checking = pending
      .catch((error) => {
        log(`auto-update: check failed: ${describe(error)}`);
        return null;
      })
      .finally(() => {
        checking = null;
      });
    return checking;
  }

  check();
  const timer = setInterval(check, intervalMs);
  if (typeof timer.unref === 'function') timer.unref();
  return {
    check,
    stop() {
      clearInterval(timer);
    },
  };
}

module.exports = { startAutoUpdate, DEFAULT_INTERVAL_MS };
