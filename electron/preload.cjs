'use strict';
/**
 * The only bridge between the page and the desktop shell: `window.lhDesktop`.
 * Sandboxed preload (no Node): the version comes through webPreferences.additionalArguments.
 * Keys go to main and never come back; main validates the provider and restarts the server.
 */

const { contextBridge, ipcRenderer } = require('electron');

const VERSION_ARG = '--lh-version=';
const versionArg = process.argv.find((arg) => arg.startsWith(VERSION_ARG));

contextBridge.exposeInMainWorld(
  'lhDesktop',
  Object.freeze({
    version: versionArg ? versionArg.slice(VERSION_ARG.length) : 'unknown',
    setApiKey: (provider, key) => ipcRenderer.invoke('lh:set-api-key', String(provider), String(key)),
    deleteApiKey: (provider) => ipcRenderer.invoke('lh:delete-api-key', String(provider)),
    apiKeyStatus: () => ipcRenderer.invoke('lh:api-key-status'),
    // Subscription logins (ChatGPT, GitHub Copilot, xAI): each call answers the status shape
    // {mode, providers: {<id>: {state, userCode, verificationUri, expiresAt, account, error}}}; never tokens.
    subscriptions: Object.freeze({
      status: () => ipcRenderer.invoke('lh:subscriptions-status'),
      login: (provider) => ipcRenderer.invoke('lh:subscriptions-login', String(provider)),
      cancel: (provider) => ipcRenderer.invoke('lh:subscriptions-cancel', String(provider)),
      logout: (provider) => ipcRenderer.invoke('lh:subscriptions-logout', String(provider)),
    }),
  }),
);
