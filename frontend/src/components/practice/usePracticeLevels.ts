import { useEffect, useState } from 'react';
import * as api from '../../api';
import { FALLBACK_LEVELS, type PracticeLevels } from '../../core/practice/practice';

// The named levels (GET /api/practice/levels) are the server's and never change while it runs:
// read once per window and shared. Until they arrive (or when the read fails) the core's fallback
// tables, which mirror the server's, stand in.

let known: PracticeLevels | null = null;
let reading: Promise<PracticeLevels> | null = null;

function readLevels(): Promise<PracticeLevels> {
  reading ??= api.getPracticeLevels().then(
    (levels) => {
      known = levels;
      return levels;
    },
    (err: unknown) => {
      reading = null; // the next mount tries again
      throw err;
    },
  );
  return reading;
}

/** The three axes' level tables: the server's once read, the fallback before. `loaded` says which. */
export function usePracticeLevels(): { levels: PracticeLevels; loaded: boolean } {
  const [levels, setLevels] = useState<PracticeLevels | null>(known);
  useEffect(() => {
    if (levels) return;
    let live = true;
    readLevels().then(
      (l) => live && setLevels(l),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [levels]);
  return { levels: levels ?? FALLBACK_LEVELS, loaded: levels !== null };
}
