'use strict';
/**
 * Electron main: thin wiring. One instance; a per-launch token; the server sidecar on loopback;
 * one sandboxed window pinned to the server's exact origin. Every decision lives in policy.cjs
 * (pure, unit-tested); the sidecar lifecycle lives in sidecar.cjs; stored keys in keys.cjs.
 */

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const electron = require('electron');
const policy = require('./policy.cjs');
const sidecar = require('./sidecar.cjs');
const { KeyStore } = require('./keys.cjs');
const { Subscriptions, subscriptionsDir } = require('./subscriptions/index.cjs');
const { startAutoUpdate } = require('./updater.cjs');

const { app, BrowserWindow, dialog, ipcMain, safeStorage, session, shell } = electron;

const READY_TIMEOUT_MS = 45000;
const STOP_GRACE_MS = 5000;
const REPO_ROOT = path.resolve(__dirname, '..');
const IPC = Object.freeze({
  setApiKey: 'lh:set-api-key',
  deleteApiKey: 'lh:delete-api-key',
  apiKeyStatus: 'lh:api-key-status',
  subscriptionsStatus: 'lh:subscriptions-status',
  subscriptionsLogin: 'lh:subscriptions-login',
  subscriptionsCancel: 'lh:subscriptions-cancel',
  subscriptionsLogout: 'lh:subscriptions-logout',
});

const state = {
  token: null,
  origin: null,
  server: null,
  window: null,
  keyStore: null,
  dataDir: null,
  logFile: null,
  quitting: false,
  quitDone: false,
  queue: Promise.resolve(),
  secrets: [],
  shellSecret: null,
  subscriptions: null,
};

/** `text` with every key main knows (stored or inherited) replaced: no key in a log line or dialog. */
function redact(text) {
  let out = String(text);
  for (const secret of state.secrets) out = out.split(secret).join('[redacted]');
  return out;
}

/** Remember the keys to redact: those handed to the server, and the shell's own LH_*_API_KEY. */
function rememberSecrets(keys) {
  const values = [...Object.values(keys), ...policy.PROVIDERS.map((p) => process.env[policy.API_KEY_ENV[p]])];
  state.secrets = [...new Set([...state.secrets, ...values.filter((v) => typeof v === 'string' && v.length >= 4)])];
}

function log(message) {
  const line = `${new Date().toISOString()} ${redact(message)}\n`;
  if (state.logFile) {
    try {
      fs.appendFileSync(state.logFile, line);
      return;
    } catch {
      /* fall through to stderr */
    }
  }
  process.stderr.write(line);
}

/** Keep one previous log: desktop.log -> desktop.log.1 once it passes 5 MB. */
function rotateLog(file) {
  try {
    if (fs.statSync(file).size > 5 * 1024 * 1024) fs.renameSync(file, `${file}.1`);
  } catch {
    /* no log yet */
  }
}

/** The renderer's webPreferences: isolated, sandboxed, no Node, only the preload's bridge. */
function webPreferences() {
  return {
    preload: path.join(__dirname, 'preload.cjs'),
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    additionalArguments: [`--lh-version=${app.getVersion()}`],
  };
}

/** Navigation and new windows stay inside the app's origin; other web links open in the browser. */
function hardenWebContents(contents) {
  const guard = (event, url) => {
    const target = (event && event.url) || url;
    const decision = policy.navigationDecision(target, state.origin);
    if (decision === 'allow') return;
    event.preventDefault();
    if (decision === 'external') shell.openExternal(target).catch((error) => log(`openExternal: ${error.message}`));
    else log(`blocked navigation to ${String(target).slice(0, 200)}`);
  };
  contents.on('will-navigate', guard);
  contents.on('will-redirect', guard);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    const decision = policy.windowOpenDecision(url, state.origin);
    if (decision === 'allow') {
      return { action: 'allow', overrideBrowserWindowOptions: { webPreferences: webPreferences() } };
    }
    if (decision === 'external') shell.openExternal(url).catch((error) => log(`openExternal: ${error.message}`));
    return { action: 'deny' };
  });
}

/** Permissions: deny by default; the microphone only for the app's origin. */
function installSessionPolicy(ses) {
  ses.setPermissionRequestHandler((webContents, permission, callback, details) => {
    callback(policy.permissionRequestDecision(permission, details, state.origin));
  });
  ses.setPermissionCheckHandler((webContents, permission, requestingOrigin, details) =>
    policy.permissionCheckDecision(permission, requestingOrigin, details, state.origin),
  );
  if (typeof ses.setDevicePermissionHandler === 'function') ses.setDevicePermissionHandler(() => false);
}

/**
 * The per-launch token header, only on requests to the exact origin: the filter narrows the
 * requests Electron hands over, and the predicate checks each URL again (match patterns are
 * not port-exact on every version). Registering again replaces the previous listener.
 */
function installTokenHeader(ses, origin, token) {
  ses.webRequest.onBeforeSendHeaders({ urls: [`${origin}/*`] }, (details, callback) => {
    callback({ requestHeaders: policy.headersWithToken(details.url, details.requestHeaders, origin, token) });
  });
}

async function startSidecar(port = 0) {
  const keys = await state.keyStore.loadAll();
  rememberSecrets(keys);
  const { command, args, cwd } = policy.resolveServerCommand({
    packaged: app.isPackaged,
    resourcesPath: process.resourcesPath,
    repoRoot: REPO_ROOT,
    platform: process.platform,
    env: process.env,
    port,
  });
  log(`starting the server: ${command} ${args.join(' ')}`);
  const server = await sidecar.startServer({
    command,
    args,
    cwd,
    env: policy.serverEnv(process.env, { dataDir: state.dataDir, token: state.token, keys, shellSecret: state.shellSecret }),
    readyTimeoutMs: READY_TIMEOUT_MS,
    log: (stream, line) => log(`server ${stream}: ${line}`),
  });
  state.server = server;
  state.origin = server.origin;
  installTokenHeader(session.defaultSession, server.origin, state.token);
  log(`server ready at ${server.origin} (pid ${server.pid})`);
  // A fresh server holds no subscription auth: push the saved connections again (never throws).
  if (state.subscriptions) state.subscriptions.resync().catch((error) => log(`subscriptions: ${error.message}`));
  server.exited.then((info) => {
    if (state.server !== server || server.expectedStop || state.quitting) return;
    state.server = null;
    const how = info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
    showError('The Learning Harness server stopped', `The server ${how}.\n\n${server.stderrTail()}`);
    app.quit();
  });
  return server;
}

async function stopSidecar() {
  const server = state.server;
  if (!server) return;
  server.expectedStop = true;
  state.server = null;
  const result = await server.stop({ graceMs: STOP_GRACE_MS });
  log(`server stopped (code ${result.code}, signal ${result.signal}${result.forced ? ', forced' : ''})`);
}

/** Restart the server so that changed keys reach its environment; keep its port when possible. */
function restartSidecar() {
  const run = async () => {
    if (state.quitting) return;
    const previous = state.server ? state.server.port : 0;
    await stopSidecar();
    let server;
    try {
      server = await startSidecar(previous);
    } catch (error) {
      log(`restart on port ${previous} failed (${error.message}); trying a free port`);
      try {
        server = await startSidecar(0);
      } catch (again) {
        // No server, so no working page: say so plainly and quit instead of leaving a dead window.
        showError(
          'Learning Harness could not restart',
          'The app restarts its server to apply changed keys, and the server did not come back. Your keys are saved; ' +
            `start the app again.\n\n${again.message}\n\nLog: ${state.logFile}`,
        );
        app.quit();
        throw new Error('the server did not restart; the app is closing (see the log)');
      }
    }
    if (state.window && !state.window.isDestroyed() && server.port !== previous) {
      await state.window.loadURL(`${server.origin}/`);
    }
  };
  state.queue = state.queue.then(run, run);
  return state.queue;
}

function showError(title, message) {
  const text = redact(message);
  log(`${title}: ${text}`);
  dialog.showErrorBox(title, text.length > 4000 ? `${text.slice(0, 4000)}…` : text);
}

function createWindow() {
  const win = new BrowserWindow({
    width: 1200,
    height: 820,
    minWidth: 640,
    minHeight: 480,
    show: false,
    title: 'Learning Harness',
    backgroundColor: '#ffffff',
    webPreferences: webPreferences(),
  });
  state.window = win;
  win.once('ready-to-show', () => win.show());
  win.on('closed', () => {
    if (state.window === win) state.window = null;
  });
  win.loadURL(`${state.origin}/`).catch((error) => log(`loadURL: ${error.message}`));
  return win;
}

/** Only the app's own page may call the key IPC. */
function assertTrustedSender(event) {
  const url = event && event.senderFrame ? event.senderFrame.url : null;
  if (!policy.isSameOrigin(url, state.origin)) throw new Error('refused: not the app page');
}

async function keyStatus() {
  const stored = state.keyStore.storedProviders();
  return policy.keyStatus(stored, process.env, await state.keyStore.protection(), state.keyStore.problem());
}

function registerIpc() {
  ipcMain.handle(IPC.setApiKey, async (event, provider, key) => {
    assertTrustedSender(event);
    await state.keyStore.set(policy.validateProvider(provider), key);
    rememberSecrets({ [provider]: String(key).trim() });
    await restartSidecar();
    return keyStatus();
  });
  ipcMain.handle(IPC.deleteApiKey, async (event, provider) => {
    assertTrustedSender(event);
    await state.keyStore.delete(policy.validateProvider(provider));
    await restartSidecar();
    return keyStatus();
  });
  ipcMain.handle(IPC.apiKeyStatus, async (event) => {
    assertTrustedSender(event);
    return keyStatus();
  });
  // Subscription logins: status, user codes and controls only; tokens never reach the renderer.
  ipcMain.handle(IPC.subscriptionsStatus, async (event) => {
    assertTrustedSender(event);
    return state.subscriptions.status();
  });
  ipcMain.handle(IPC.subscriptionsLogin, async (event, provider) => {
    assertTrustedSender(event);
    return state.subscriptions.login(provider);
  });
  ipcMain.handle(IPC.subscriptionsCancel, async (event, provider) => {
    assertTrustedSender(event);
    return state.subscriptions.cancel(provider);
  });
  ipcMain.handle(IPC.subscriptionsLogout, async (event, provider) => {
    assertTrustedSender(event);
    return state.subscriptions.logout(provider);
  });
}

async function onReady() {
  const userData = app.getPath('userData');
  fs.mkdirSync(path.join(userData, 'logs'), { recursive: true });
  state.logFile = path.join(userData, 'logs', 'desktop.log');
  rotateLog(state.logFile);
  state.token = crypto.randomBytes(32).toString('hex');
  state.dataDir = path.join(userData, 'data');
  fs.mkdirSync(state.dataDir, { recursive: true });
  state.keyStore = new KeyStore(path.join(userData, 'api-keys.json'), safeStorage, { log });
  state.shellSecret = crypto.randomBytes(32).toString('hex');
  state.secrets.push(state.shellSecret);
  state.subscriptions = new Subscriptions({
    dir: subscriptionsDir(userData),
    safeStorage,
    env: process.env,
    log,
    openExternal: (url) => shell.openExternal(url),
    target: () => (state.server ? { origin: state.origin, token: state.token, secret: state.shellSecret } : null),
  });
  state.subscriptions.init().catch((error) => log(`subscriptions: ${error.message}`));
  installSessionPolicy(session.defaultSession);
  registerIpc();
  try {
    await startSidecar(0);
  } catch (error) {
    showError(
      'Learning Harness could not start',
      `${error.message}\n\nData folder: ${state.dataDir}\nLog: ${state.logFile}`,
    );
    app.quit();
    return;
  }
  createWindow();
  state.updates = startAutoUpdate({ app, log }); // packaged apps only; LH_NO_UPDATE=1 turns it off
}

function focusWindow() {
  const win = state.window;
  if (!win || win.isDestroyed()) return;
  if (win.isMinimized()) win.restore();
  win.show();
  win.focus();
}

/** Wire the app. Returns a promise that settles once the first window exists (or start failed). */
function start() {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return Promise.resolve(false);
  }
  app.enableSandbox();
  app.on('second-instance', focusWindow);
  app.on('web-contents-created', (event, contents) => hardenWebContents(contents));
  app.on('window-all-closed', () => app.quit());
  app.on('activate', () => {
    if (!state.window && state.origin && state.server) createWindow();
  });
  app.on('before-quit', (event) => {
    if (state.quitDone) return;
    // Stop the server (graceful, then its whole tree) after any restart in flight, then quit for real.
    event.preventDefault();
    if (state.quitting) return;
    state.quitting = true;
    if (state.subscriptions) state.subscriptions.close();
    state.queue
      .catch(() => {})
      .then(stopSidecar)
      .catch((error) => log(`stopping the server: ${error.message}`))
      .finally(() => {
        state.quitDone = true;
        app.quit();
      });
  });
  return app.whenReady().then(onReady).then(() => true);
}

module.exports = { start, state, webPreferences, installTokenHeader, restartSidecar, IPC };

if (process.versions.electron) start();
