/**
 * The page's toasts: short notices at the bottom of the page, each with at most one action (an
 * Undo). A small store without React: `pushToast` from anywhere, `Toasts.tsx` renders them.
 * A toast goes when its time is up (`ms`), when its action ran, or when it is closed.
 */

export interface Toast {
  id: number;
  text: string;
  /** The action's label (e.g. "Undo") and what it does; a toast without one only informs. */
  action?: { label: string; run: () => void | Promise<void> };
  /** How long it stays, in milliseconds. */
  ms: number;
}

type Listener = (toasts: readonly Toast[]) => void;

let toasts: readonly Toast[] = [];
let nextId = 1;
const listeners = new Set<Listener>();

function publish(next: readonly Toast[]): void {
  toasts = next;
  for (const listener of listeners) listener(toasts);
}

/** Show a toast (`ms` defaults to 10 s); returns its id. */
export function pushToast(toast: Omit<Toast, 'id' | 'ms'> & { ms?: number }): number {
  const id = nextId++;
  publish([...toasts, { ms: 10_000, ...toast, id }]);
  return id;
}

/** Take a toast away (no-op when it is gone already). */
export function dismissToast(id: number): void {
  if (toasts.some((t) => t.id === id)) publish(toasts.filter((t) => t.id !== id));
}

/** The toasts shown now. */
export function currentToasts(): readonly Toast[] {
  return toasts;
}

/** Be told of every change; returns the unsubscribe. */
export function subscribeToasts(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
