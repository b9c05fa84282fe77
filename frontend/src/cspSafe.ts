// The first module the app evaluates (main.tsx imports it first; vite.config.ts gives it a chunk
// of its own so it runs before the vendor chunks). The app's Content-Security-Policy allows no
// eval (script-src 'self', decision 0020); zod 4 probes `new Function('')` once, when its first
// object schema is defined, to decide whether to compile parsers, and Chromium reports that probe
// as a policy violation although zod catches it. zod reads its settings from this global (created
// by its core on load, kept when present): `jitless` skips the probe, zod parses without compiled
// fast paths.

const scope = globalThis as { __zod_globalConfig?: Record<string, unknown> };
scope.__zod_globalConfig = { ...scope.__zod_globalConfig, jitless: true };

export {};
