// Jumping within the transcript (a dispatch card to its artifact, a citation to its source):
// scroll the element into view and flash it briefly; the URL is left alone.

const FLASH_MS = 1600;

export function scrollToAnchor(id: string): boolean {
  if (typeof document === 'undefined') return false;
  const el = document.getElementById(id);
  if (!el) return false;
  el.scrollIntoView({ behavior: 'smooth', block: 'center' });
  el.classList.remove('anchor-flash');
  // restart the animation when the same element is jumped to twice
  void el.offsetWidth;
  el.classList.add('anchor-flash');
  window.setTimeout(() => el.classList.remove('anchor-flash'), FLASH_MS);
  return true;
}
