/**
 * The offline model's background build as the page shows it (issue 29, item 1): `make run` shows
 * the app before llama.cpp is compiled; the server builds it afterwards and reports its progress in
 * `GET /api/settings` offline.build (one plain sentence, `line`, the same the terminal shows). Pure.
 */
import type { OfflineBuildInfo } from '../types';

/** How often the page asks for the build's progress while it runs (ms). */
export const BUILD_POLL_MS = 5000;

export interface BuildNotice {
  kind: 'building' | 'failed';
  /** The server's sentence: step, files compiled, time so far, time left, what follows. */
  line: string;
}

/** What the banner says about the build: while it runs or after it failed; nothing once it
 * installed (the offline model is then offered like any other) or when no build ran. */
export function buildNotice(offline: { build?: OfflineBuildInfo | null } | null | undefined): BuildNotice | null {
  const build = offline?.build;
  if (!build || typeof build.line !== 'string' || !build.line.trim()) return null;
  if (build.state === 'building' || build.state === 'failed') return { kind: build.state, line: build.line.trim() };
  return null;
}

/** Whether the page should keep asking for the build's progress. */
export function buildRunning(offline: { build?: OfflineBuildInfo | null } | null | undefined): boolean {
  return offline?.build?.state === 'building';
}

/** The server's "not installed" sentence for the offline model, which is untrue advice while it is
 * being built (the learner need not install anything): those problems are left out meanwhile. */
export function problemsWhileBuilding(problems: string[], building: boolean): string[] {
  return building ? problems.filter((p) => !p.includes('the offline model is not installed')) : problems;
}
