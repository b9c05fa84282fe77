'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const Module = require('node:module');
const path = require('node:path');

const PRELOAD = path.resolve(__dirname, '..', 'preload.cjs');

test('the preload exposes only version, the three key calls and the subscription controls, over invoke', async () => {
  const exposed = {};
  const invoked = [];
  const electron = {
    contextBridge: { exposeInMainWorld: (name, api) => { exposed[name] = api; } },
    ipcRenderer: { invoke: async (...args) => { invoked.push(args); return 'ok'; } },
  };
  const originalLoad = Module._load;
  const savedArgv = process.argv;
  process.argv = [...savedArgv, '--lh-version=1.2.3'];
  Module._load = function load(request, parent, isMain) {
    return request === 'electron' ? electron : originalLoad.call(this, request, parent, isMain);
  };
  try {
    delete require.cache[PRELOAD];
    require(PRELOAD);
  } finally {
    Module._load = originalLoad;
    process.argv = savedArgv;
  }
  assert.deepEqual(Object.keys(exposed), ['lhDesktop']);
  const api = exposed.lhDesktop;
  assert.deepEqual(Object.keys(api).sort(), ['apiKeyStatus', 'deleteApiKey', 'setApiKey', 'subscriptions', 'version']);
  assert.ok(Object.isFrozen(api.subscriptions));
  assert.deepEqual(Object.keys(api.subscriptions).sort(), ['cancel', 'login', 'logout', 'status']);
  assert.ok(Object.isFrozen(api));
  assert.equal(api.version, '1.2.3');
  await api.setApiKey('openai', 'sk-1');
  await api.deleteApiKey('openrouter');
  await api.apiKeyStatus();
  await api.subscriptions.status();
  await api.subscriptions.login('chatgpt');
  await api.subscriptions.cancel('chatgpt');
  await api.subscriptions.logout('xai-subscription');
  assert.deepEqual(invoked, [
    ['lh:set-api-key', 'openai', 'sk-1'],
    ['lh:delete-api-key', 'openrouter'],
    ['lh:api-key-status'],
    ['lh:subscriptions-status'],
    ['lh:subscriptions-login', 'chatgpt'],
    ['lh:subscriptions-cancel', 'chatgpt'],
    ['lh:subscriptions-logout', 'xai-subscription'],
  ]);
});
