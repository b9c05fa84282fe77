'use strict';
/**
 * A recording stand-in for the `electron` module (the Electron binary cannot run here), and a
 * loader that requires main.cjs with `electron` (and optionally `./sidecar.cjs`) replaced through
 * Module._load interception.
 */

const EventEmitter = require('node:events');
const Module = require('node:module');
const path = require('node:path');

class FakeWebContents extends EventEmitter {
  constructor() {
    super();
    this.windowOpenHandler = null;
  }
  setWindowOpenHandler(handler) {
    this.windowOpenHandler = handler;
  }
  /** Emits a navigation event the way Electron >= 25 does: an Event carrying `url`. */
  navigate(eventName, url) {
    const event = {
      url,
      defaultPrevented: false,
      preventDefault() {
        this.defaultPrevented = true;
      },
    };
    this.emit(eventName, event, url);
    return event;
  }
}

function createFakeElectron({ userData, singleInstance = true, packaged = false, encryption = true, backend = 'gnome_libsecret' } = {}) {
  const calls = {
    quit: 0,
    errorBoxes: [],
    openExternal: [],
    windows: [],
    ipc: {},
    beforeSendHeaders: [],
    permissionRequest: null,
    permissionCheck: null,
    devicePermission: null,
    sandboxEnabled: false,
  };

  const app = new EventEmitter();
  Object.assign(app, {
    isPackaged: packaged,
    requestSingleInstanceLock: () => singleInstance,
    enableSandbox: () => {
      calls.sandboxEnabled = true;
    },
    whenReady: () => Promise.resolve(),
    getPath: (name) => {
      if (name !== 'userData') throw new Error(`unexpected getPath(${name})`);
      return userData;
    },
    getVersion: () => '0.1.0-test',
    quit: () => {
      calls.quit += 1;
      const event = {
        defaultPrevented: false,
        preventDefault() {
          this.defaultPrevented = true;
        },
      };
      app.emit('before-quit', event);
      if (!event.defaultPrevented) app.emit('will-quit');
      return event;
    },
  });

  class BrowserWindow extends EventEmitter {
    constructor(options) {
      super();
      this.options = options;
      this.webContents = new FakeWebContents();
      this.loaded = [];
      this.destroyed = false;
      this.focused = 0;
      calls.windows.push(this);
      app.emit('web-contents-created', {}, this.webContents);
    }
    loadURL(url) {
      this.loaded.push(url);
      return Promise.resolve();
    }
    isDestroyed() {
      return this.destroyed;
    }
    isMinimized() {
      return false;
    }
    restore() {}
    show() {}
    focus() {
      this.focused += 1;
    }
  }

  const defaultSession = {
    webRequest: {
      onBeforeSendHeaders(filter, listener) {
        calls.beforeSendHeaders.push({ filter, listener });
      },
    },
    setPermissionRequestHandler(handler) {
      calls.permissionRequest = handler;
    },
    setPermissionCheckHandler(handler) {
      calls.permissionCheck = handler;
    },
    setDevicePermissionHandler(handler) {
      calls.devicePermission = handler;
    },
  };

  // Not real encryption: a reversible transform that never leaves the plaintext readable.
  const safeStorage = {
    isAsyncEncryptionAvailable: async () => encryption,
    getSelectedStorageBackend: () => backend,
    encryptStringAsync: async (text) => Buffer.from(`enc:${Buffer.from(text, 'utf8').toString('hex')}`, 'utf8'),
    decryptStringAsync: async (buffer) => {
      const text = buffer.toString('utf8');
      if (!text.startsWith('enc:')) throw new Error('bad ciphertext');
      return { result: Buffer.from(text.slice(4), 'hex').toString('utf8'), shouldReEncrypt: false };
    },
  };

  const electron = {
    app,
    BrowserWindow,
    session: { defaultSession },
    shell: {
      openExternal: async (url) => {
        calls.openExternal.push(url);
      },
    },
    dialog: {
      showErrorBox: (title, content) => calls.errorBoxes.push({ title, content }),
    },
    ipcMain: {
      handle: (channel, handler) => {
        calls.ipc[channel] = handler;
      },
    },
    safeStorage,
  };
  return { electron, calls };
}

/** A sidecar stand-in: records every start and stop, answers on `port` (or fails with `failWith`). */
function createFakeSidecar({ port = 4567, failWith = null } = {}) {
  const record = { starts: [], stops: 0 };
  let nextPort = port;
  const sidecar = {
    startServer: async (options) => {
      record.starts.push(options);
      if (failWith) throw failWith;
      const requested = Number(options.args[options.args.indexOf('--port') + 1]);
      const actual = requested || nextPort;
      let resolveExited;
      const exited = new Promise((r) => {
        resolveExited = r;
      });
      return {
        port: actual,
        pid: 4242,
        serverPid: 4242,
        origin: `http://127.0.0.1:${actual}`,
        exited,
        stderrTail: () => 'fake stderr',
        crash: (code) => resolveExited({ code, signal: null }),
        stop: async () => {
          record.stops += 1;
          resolveExited({ code: 0, signal: null });
          return { code: 0, signal: null, forced: false };
        },
      };
    },
  };
  return { sidecar, record };
}

const MAIN = path.resolve(__dirname, '..', '..', 'main.cjs');

/** require(main.cjs) afresh with `electron` (and `./sidecar.cjs` when given) substituted. */
function loadMain({ electron, sidecar }) {
  const originalLoad = Module._load;
  for (const key of Object.keys(require.cache)) {
    if (key === MAIN || key.endsWith(`${path.sep}keys.cjs`)) delete require.cache[key];
  }
  Module._load = function load(request, parent, isMain) {
    if (request === 'electron') return electron;
    if (sidecar && request === './sidecar.cjs' && parent && parent.filename === MAIN) return sidecar;
    return originalLoad.call(this, request, parent, isMain);
  };
  try {
    return require(MAIN);
  } finally {
    Module._load = originalLoad;
  }
}

module.exports = { createFakeElectron, createFakeSidecar, loadMain, FakeWebContents };
