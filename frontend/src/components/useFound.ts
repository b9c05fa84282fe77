// A search result opens a page at one thing (issue 31 item 5): once the element carrying
// `[attr="id"]` is on the page, it is scrolled to the middle and marked found (class `found`,
// `data-found`), once per id.
import { useEffect, useRef } from 'react';

export function useFound(attr: string, id: string | null, ready: unknown): void {
  const done = useRef<string | null>(null);
  useEffect(() => {
    if (!id || done.current === id) return;
    const el = document.querySelector<HTMLElement>(`[${attr}="${CSS.escape(id)}"]`);
    if (!el) return;
    done.current = id;
    document.querySelectorAll('[data-found]').forEach((n) => {
      n.classList.remove('found');
      n.removeAttribute('data-found');
    });
    el.classList.add('found');
    el.setAttribute('data-found', 'true');
    el.scrollIntoView({ block: 'center' });
  }, [attr, id, ready]);
}
