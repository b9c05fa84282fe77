import './libraryPage.css';
import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent } from 'react';
import { Link } from 'react-router-dom';
import * as api from '../../api';
import { useActivity, type ImportEntry } from '../../activityState';
import { formatRowUsage, formatStats, formatUsageSum, importCountsWords, isRunningRow, partIndex, phaseWords, splitLabel, type ActivityRow } from '../../core/machine_room/activity';
import { describeError } from '../../core/errors';
import {
  MAX_NOTE_BYTES,
  NOTE_ACCEPT,
  askWords,
  batchBySize,
  entryPath,
  fileProgress,
  foldedState,
  earlierImportBadge,
  formatBytes,
  formatSizeOver,
  folderRoots,
  goneWords,
  importedOn,
  makeBaseline,
  mergePicks,
  plainDetail,
  progressWords,
  runRows,
  splitBySize,
  splitFolderFiles,
  uploadName,
  type FileProgress,
  type FileState,
  type GoneNote,
  type GraphSource,
  type ImportFileResult,
  type NameDecision,
} from '../../core/library/imports';
import PhasePill from '../machine_room/PhasePill';

/** A file chosen for import: the file and the name it is sent under. */
interface Chosen {
  file: File;
  path: string;
}

/** A single file the import asked about (its name matches a note with other content). */
interface Asked {
  pick: Chosen;
  result: ImportFileResult;
}

/** Notes gone from the folders picked again, waiting for the learner's one confirmation. */
interface Gone {
  notes: GoneNote[];
  roots: string[];
  importId: string | null;
}

const BATCH_FILES = 50;
const BATCH_BYTES = 16_000_000;

export default function LibraryPage() {
  return (
    <div className="page page-narrow library">
      <h1>Import notes</h1>
      <p className="lead">
        Add your own notes in Markdown or plain text. They are read in the background, and what they state joins your knowledge graph, next to
        what your lessons taught.
      </p>
      <ImportForm />
      <ImportResults />
      <GraphSources />
    </div>
  );
}

// ---------------------------------------------------------------------------
// Choosing and sending files

function ImportForm() {
  const { refresh, fetchCount, addImports } = useActivity();
  const [picks, setPicks] = useState<Chosen[]>([]);
  const [skipped, setSkipped] = useState<string[]>([]);
  const [tooLarge, setTooLarge] = useState<Chosen[]>([]);
  const [dragging, setDragging] = useState(false);
  const [posting, setPosting] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [summary, setSummary] = useState<string | null>(null);
  const [asks, setAsks] = useState<Asked[]>([]);
  const [gone, setGone] = useState<Gone | null>(null);
  // Every notes file of the folders picked (sent or not: a file too large is still there), to
  // tell which notes imported from them before are gone (issue 28, item 4).
  const [folderScan, setFolderScan] = useState<string[]>([]);
  const filesInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);

  const add = useCallback((single: Chosen[], fromFolders: Chosen[]) => {
    const { keep, skipped: left } = splitFolderFiles(fromFolders);
    const { keep: fits, tooLarge: over } = splitBySize([...single, ...keep]);
    if (keep.length) setFolderScan((current) => [...new Set([...current, ...keep.map((p) => p.path)])]);
    setPicks((current) => mergePicks(current, fits));
    setSkipped(left.map((p) => p.path));
    setTooLarge(over);
    setError(null);
    setSummary(null);
  }, []);

  // A file dropped next to the drop zone must not make the browser leave the app.
  useEffect(() => {
    const stop = (e: globalThis.DragEvent) => {
      if (e.dataTransfer?.types.includes('Files')) e.preventDefault();
    };
    window.addEventListener('dragover', stop);
    window.addEventListener('drop', stop);
    return () => {
      window.removeEventListener('dragover', stop);
      window.removeEventListener('drop', stop);
    };
  }, []);

  function onPicked(input: HTMLInputElement | null, folder: boolean) {
    if (!input?.files) return;
    const chosen = Array.from(input.files).map((file) => ({ file, path: uploadName(file) }));
    input.value = ''; // choosing the same file again still fires a change
    if (folder) add([], chosen);
    else add(chosen, []);
  }

  async function onDrop(e: DragEvent<HTMLDivElement>) {
    e.preventDefault();
    setDragging(false);
    // Entries must be taken while the drop event runs; they are read afterwards.
    const entries = Array.from(e.dataTransfer.items ?? [])
      .filter((item) => item.kind === 'file')
      .map((item) => item.webkitGetAsEntry?.() ?? null);
    const plain = Array.from(e.dataTransfer.files);
    if (!entries.length || entries.some((entry) => entry === null)) {
      add(
        plain.map((file) => ({ file, path: uploadName(file) })),
        [],
      );
      return;
    }
    try {
      const single: Chosen[] = [];
      const fromFolders: Chosen[] = [];
      for (const entry of entries) {
        if (!entry) continue;
        if (entry.isDirectory) fromFolders.push(...(await readFolder(entry as FileSystemDirectoryEntry)));
        else single.push({ file: await entryFile(entry as FileSystemFileEntry), path: entry.name });
      }
      add(single, fromFolders);
    } catch (err) {
      setError(`Could not read what was dropped: ${describeError(err).detail}`);
    }
  }

  async function submit() {
    if (!picks.length) return;
    setPosting(true);
    setError(null);
    setSummary(null);
    // What the feed holds now, to tell this import's runs from earlier ones of the same files.
    const before = await refresh();
    const baseline = before ? makeBaseline(before) : null;
    const answered: ImportFileResult[] = [];
    const sent = new Set<string>();
    let failure: string | null = null;
    let importId: string | null = null; // every page of one pick joins one import (one summary row)
    for (const batch of batchBySize(
      picks.map((p) => p.file.size),
      BATCH_FILES,
      BATCH_BYTES,
    )) {
      const files = batch.map((i) => picks[i]);
      try {
        const answer = await api.importNotes(
          files.map((p) => ({ file: p.file, name: p.path })),
          importId,
        );
        importId = answer.importId ?? importId;
        answered.push(...answer.files);
        files.forEach((p) => sent.add(p.path));
      } catch (err) {
        failure = describeError(err).detail;
        break;
      }
    }
    const fetchesAtPost = fetchCount();
    const stamp = Date.now();
    const followed = answered.filter((r) => r.status !== 'ask');
    addImports(followed.map((result, i) => ({ key: `${stamp}-${i}-${result.name}`, result, baseline, fetchesAtPost })));
    const asked = answered.filter((r) => r.status === 'ask');
    setAsks((current) => [
      ...current.filter((a) => !asked.some((r) => r.name === a.result.name)),
      ...asked.flatMap((result) => picks.filter((p) => p.path === result.name).map((pick) => ({ pick, result: { ...result, importId: result.importId ?? importId } }))),
    ]);
    setPicks((current) => current.filter((p) => !sent.has(p.path)));
    if (answered.length) setSkipped([]);
    if (answered.some((r) => r.status === 'queued' || r.status === 'running')) void refresh();
    // A folder picked again: the notes it held before and holds no more are listed, never removed
    // without the learner's one confirmation. Checked before the summary shows.
    const roots = folderRoots(picks.filter((p) => sent.has(p.path)).map((p) => p.path));
    if (!failure && roots.length) {
      const present = folderScan.filter((path) => roots.some((root) => path.startsWith(`${root}/`)));
      setFolderScan([]);
      try {
        const notes = await api.goneNotes(roots, present);
        setGone(notes.length ? { notes, roots, importId } : null);
      } catch (err) {
        setError(`Could not check which notes are gone from ${roots.join(', ')}: ${describeError(err).detail}`);
      }
    }
    if (failure) {
      setError(answered.length ? `Some files were not sent: ${failure} They are still selected; try again.` : failure);
    }
    setSummary(answered.length ? summarize(answered) : null);
    setPosting(false);
  }

  /** Carry out the learner's answer for a file the import asked about. */
  async function answer(asked: Asked, decision: NameDecision | null) {
    const rest = (current: Asked[]) => current.filter((a) => a.result.name !== asked.result.name);
    if (!decision) {
      setAsks(rest);
      setSummary(`${asked.result.name} was not imported.`);
      return;
    }
    setPosting(true);
    setError(null);
    const before = await refresh();
    const baseline = before ? makeBaseline(before) : null;
    try {
      const reply = await api.importNotes([{ file: asked.pick.file, name: asked.pick.path }], asked.result.importId, [decision]);
      const again = reply.files.filter((r) => r.status === 'ask');
      const stamp = Date.now();
      const fetchesAtPost = fetchCount();
      addImports(
        reply.files.filter((r) => r.status !== 'ask').map((result, i) => ({ key: `${stamp}-${i}-${result.name}`, result, baseline, fetchesAtPost })),
      );
      setAsks((current) => [...rest(current), ...again.map((result) => ({ pick: asked.pick, result: { ...result, importId: result.importId ?? asked.result.importId } }))]);
      setSummary(reply.files.length ? summarize(reply.files) : null);
      if (reply.files.some((r) => r.status === 'queued' || r.status === 'running')) void refresh();
    } catch (err) {
      setError(`${asked.result.name} was not imported: ${describeError(err).detail}`);
    } finally {
      setPosting(false);
    }
  }

  /** The learner's one confirmation: take out what the gone notes said. */
  async function removeGone(list: Gone) {
    setPosting(true);
    setError(null);
    try {
      const reply = await api.removeNotes(
        list.notes.map((g) => g.sourceId),
        list.importId,
      );
      const stamp = Date.now();
      const fetchesAtPost = fetchCount();
      addImports(reply.files.map((result, i) => ({ key: `${stamp}-gone-${i}-${result.name}`, result, baseline: null, fetchesAtPost })));
      setGone(null);
      const removed = reply.files.filter((r) => r.status === 'removed').length;
      setSummary(`Removed what ${removed} note${removed === 1 ? '' : 's'} said from your graph.`);
      void refresh();
    } catch (err) {
      setError(`Nothing was removed: ${describeError(err).detail}`);
    } finally {
      setPosting(false);
    }
  }

  const totalBytes = picks.reduce((n, p) => n + p.file.size, 0);

  return (
    <section className="card import-card" aria-labelledby="import-heading">
      <h2 id="import-heading" className="visually-hidden">
        Choose notes
      </h2>
      <div
        className={dragging ? 'dropzone dragging' : 'dropzone'}
        data-testid="import-dropzone"
        onDragOver={(e) => {
          e.preventDefault();
          e.dataTransfer.dropEffect = 'copy';
          setDragging(true);
        }}
        onDragLeave={(e) => {
          if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false);
        }}
        onDrop={(e) => void onDrop(e)}
      >
        <p className="dropzone-title">Drop notes files or a folder here</p>
        <p className="muted small">.md, .markdown or .txt · UTF-8 text · up to {formatBytes(MAX_NOTE_BYTES)} each</p>
        <div className="dropzone-actions">
          <button type="button" className="btn" onClick={() => filesInput.current?.click()}>
            Choose files…
          </button>
          <button type="button" className="btn" onClick={() => folderInput.current?.click()}>
            Choose a folder…
          </button>
        </div>
        <input
          ref={filesInput}
          type="file"
          multiple
          accept={NOTE_ACCEPT}
          className="visually-hidden"
          tabIndex={-1}
          aria-label="Choose notes files"
          data-testid="import-files"
          onChange={(e) => onPicked(e.currentTarget, false)}
        />
        <input
          ref={folderInput}
          type="file"
          multiple
          webkitdirectory=""
          className="visually-hidden"
          tabIndex={-1}
          aria-label="Choose a folder of notes"
          data-testid="import-folder"
          onChange={(e) => onPicked(e.currentTarget, true)}
        />
      </div>

      {skipped.length > 0 && (
        <p className="muted small skipped-note" data-testid="import-skipped" title={skipped.slice(0, 20).join('\n')}>
          Left out {skipped.length} file{skipped.length === 1 ? '' : 's'} of the folder that {skipped.length === 1 ? 'is' : 'are'} not notes (not .md,
          .markdown or .txt, or hidden).
        </p>
      )}

      {tooLarge.length > 0 && (
        <div className="banner banner-error" role="alert" data-testid="import-too-large">
          {tooLarge.length === 1 ? 'This file is' : 'These files are'} larger than the {formatBytes(MAX_NOTE_BYTES)} limit and
          {tooLarge.length === 1 ? ' was' : ' were'} not added:{' '}
          {tooLarge
            .slice(0, 5)
            .map((p) => `${p.path} (${formatSizeOver(p.file.size)})`)
            .join(', ')}
          {tooLarge.length > 5 ? ` and ${tooLarge.length - 5} more` : ''}. Split a large file into smaller ones.
        </div>
      )}

      {picks.length > 0 && (
        <div className="picks">
          <div className="picks-head">
            <span>
              <strong>{picks.length}</strong> file{picks.length === 1 ? '' : 's'} selected · {formatBytes(totalBytes)}
            </span>
            <button
              type="button"
              className="link-btn"
              data-testid="import-clear"
              onClick={() => {
                setPicks([]);
                setFolderScan([]);
              }}
              disabled={posting}
            >
              Clear
            </button>
          </div>
          <ul className="pick-list" data-testid="import-picks">
            {picks.map((p) => (
              <li key={p.path} data-testid="import-pick">
                <span className="pick-name" title={p.path}>
                  {p.path}
                </span>
                <span className="muted small">{formatBytes(p.file.size)}</span>
                <button
                  type="button"
                  className="icon-btn"
                  aria-label={`Remove ${p.path}`}
                  title="Remove"
                  disabled={posting}
                  onClick={() => setPicks((current) => current.filter((q) => q.path !== p.path))}
                >
                  ×
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}

      {error && (
        <div className="banner banner-error" role="alert" data-testid="import-error">
          {error}
        </div>
      )}

      <div className="form-actions">
        <button type="button" className="btn btn-primary" data-testid="import-submit" disabled={posting || picks.length === 0} onClick={() => void submit()}>
          {posting ? 'Importing…' : picks.length > 1 ? `Import ${picks.length} files` : 'Import'}
        </button>
        {summary && (
          <span className="small" data-testid="import-summary" role="status">
            {summary}
          </span>
        )}
      </div>

      {asks.map((asked) => (
        <AskPanel key={asked.result.name} asked={asked} busy={posting} onAnswer={(decision) => void answer(asked, decision)} />
      ))}
      {gone && <GonePanel gone={gone} busy={posting} onRemove={() => void removeGone(gone)} onKeep={() => setGone(null)} />}
    </section>
  );
}

/** A single file of a known name: replace that note, keep both, or leave it out (item 5). */
function AskPanel({ asked, busy, onAnswer }: { asked: Asked; busy: boolean; onAnswer: (decision: NameDecision | null) => void }) {
  const { result } = asked;
  return (
    <div className="banner banner-warn import-ask" role="group" aria-label={`${result.name} has the name of a note in your graph`} data-testid="import-ask" data-name={result.name}>
      <p>{askWords(result)}</p>
      <div className="form-actions">
        {result.sameName.map((note) => {
          const when = importedOn(note.at);
          return (
            <button key={note.sourceId} type="button" className="btn" data-testid="import-ask-replace" data-source-id={note.sourceId} disabled={busy} onClick={() => onAnswer({ name: result.name, choice: 'replace', sourceId: note.sourceId })}>
              Replace {note.title}
              {when ? ` (${when})` : ''}
            </button>
          );
        })}
        <button type="button" className="btn" data-testid="import-ask-new" disabled={busy} onClick={() => onAnswer({ name: result.name, choice: 'new' })}>
          Keep both: import it as a new note
        </button>
        <button type="button" className="link-btn" data-testid="import-ask-skip" disabled={busy} onClick={() => onAnswer(null)}>
          Don’t import it
        </button>
      </div>
    </div>
  );
}

/** Notes gone from a folder picked again: listed, removed only on one confirmation (item 4). */
function GonePanel({ gone, busy, onRemove, onKeep }: { gone: Gone; busy: boolean; onRemove: () => void; onKeep: () => void }) {
  const { notes } = gone;
  return (
    <div className="banner banner-warn import-gone" role="group" aria-label="Notes gone from the folder" data-testid="import-gone">
      <p>{goneWords(notes, gone.roots)}</p>
      <ul className="pick-list" data-testid="import-gone-list">
        {notes.slice(0, 50).map((g) => (
          <li key={g.sourceId} data-testid="import-gone-note">
            <span className="pick-name" title={g.path}>
              {g.path}
            </span>
            <span className="muted small">
              {g.propositions} proposition{g.propositions === 1 ? '' : 's'}
            </span>
          </li>
        ))}
        {notes.length > 50 && <li className="muted small">and {notes.length - 50} more</li>}
      </ul>
      <div className="form-actions">
        <button type="button" className="btn btn-primary" data-testid="import-gone-remove" disabled={busy} onClick={onRemove}>
          Remove what {notes.length === 1 ? 'it' : `these ${notes.length}`} said
        </button>
        <button type="button" className="link-btn" data-testid="import-gone-keep" disabled={busy} onClick={onKeep}>
          Keep {notes.length === 1 ? 'it' : 'them'} in my graph
        </button>
      </div>
    </div>
  );
}

function summarize(results: readonly ImportFileResult[]): string {
  const count = (s: ImportFileResult['status']) => results.filter((r) => r.status === s).length;
  const parts: string[] = [];
  const started = count('queued') + count('running');
  if (started) parts.push(`${started} accepted`);
  if (count('unchanged')) parts.push(`${count('unchanged')} unchanged`);
  if (count('refused')) parts.push(`${count('refused')} refused`);
  if (count('ask')) parts.push(`${count('ask')} waiting for your answer`);
  if (count('ask') && !started && !count('unchanged') && !count('refused')) return 'Nothing was imported yet: answer the question below.';
  if (!started && !count('unchanged') && !count('ask')) return 'Nothing was imported: every file was refused (see below).';
  return `Sent ${results.length} file${results.length === 1 ? '' : 's'}: ${parts.join(', ')}.`;
}

function entryFile(entry: FileSystemFileEntry): Promise<File> {
  return new Promise((resolve, reject) => entry.file(resolve, reject));
}

/** Every file under a dropped folder, named by its path from the folder ("vault/sub/a.md"). */
async function readFolder(dir: FileSystemDirectoryEntry): Promise<Chosen[]> {
  const out: Chosen[] = [];
  const reader = dir.createReader();
  for (;;) {
    // readEntries answers in chunks; an empty chunk means the end.
    const chunk = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (!chunk.length) break;
    for (const entry of chunk) {
      if (entry.isDirectory) out.push(...(await readFolder(entry as FileSystemDirectoryEntry)));
      else if (entry.isFile) out.push({ file: await entryFile(entry as FileSystemFileEntry), path: entryPath(entry.fullPath, entry.name) });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Results, with live progress from the activity feed

interface Followed {
  entry: ImportEntry;
  rows: ActivityRow[];
  progress: FileProgress;
}

function ImportResults() {
  const { imports, rows, fetches, removeImports, error } = useActivity();

  const followed: Followed[] = useMemo(
    () =>
      imports.map((entry) => {
        const mine = entry.result.sourceId ? runRows(rows ?? [], entry.result.sourceId, entry.baseline) : [];
        const summary = entry.result.importId ? (rows ?? []).find((r) => r.kind === 'import' && r.id === entry.result.importId) : undefined;
        const folded = foldedState(summary, entry.result.sourceId);
        return { entry, rows: mine, progress: fileProgress(entry.result, mine, fetches - entry.fetchesAtPost, folded) };
      }),
    [imports, rows, fetches],
  );

  // Imports this window no longer follows (the page was reloaded, or they were cleared): the
  // activity feed still has their summary rows, so coming back shows what became of them.
  const earlier = useMemo(() => {
    const followedIds = new Set(imports.map((e) => e.result.importId).filter(Boolean));
    return (rows ?? []).filter((r) => r.kind === 'import' && !followedIds.has(r.id));
  }, [imports, rows]);

  const unsettled = followed.some((f) => !f.progress.settled);
  if (!imports.length && !earlier.length) return null;
  const settledKeys = followed.filter((f) => f.progress.settled).map((f) => f.entry.key);

  return (
    <section className="import-results" aria-labelledby="imports-heading">
      <div className="section-head">
        <h2 id="imports-heading">Imported files</h2>
        {settledKeys.length > 0 && (
          <button type="button" className="link-btn" data-testid="import-results-clear" onClick={() => removeImports(settledKeys)}>
            Clear finished
          </button>
        )}
      </div>
      {error && unsettled && (
        <p className="error-text small" role="alert" data-testid="import-progress-error">
          Could not load progress: {error}
        </p>
      )}
      <ul className="import-list">
        {followed.map((f) => (
          <ImportResultView key={f.entry.key} followed={f} />
        ))}
        {earlier.map((row) => (
          <EarlierImport key={`${row.id}@${row.queuedAt}`} row={row} />
        ))}
      </ul>
    </section>
  );
}

const STATE_LABEL: Record<FileState, string> = {
  refused: 'Refused',
  unchanged: 'Unchanged',
  queued: 'Queued',
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
  aborted: 'Aborted',
  lost: 'No progress',
  removed: 'Removed',
  ask: 'Asked',
};

function ImportResultView({ followed }: { followed: Followed }) {
  const { abort, aborting } = useActivity();
  const [notice, setNotice] = useState<string | null>(null);
  const { entry, rows, progress } = followed;
  const { result } = entry;
  const sourceId = result.sourceId;
  const detail =
    progress.state === 'refused' || progress.state === 'unchanged' || progress.state === 'removed'
      ? plainDetail(result.name, result.detail) || STATE_LABEL[progress.state]
      : progressWords(progress, phaseWords);
  const usage = formatUsageSum(progress.usage);
  const stats = formatStats(progress.stats);
  const showBar = progress.total > 0 && (!progress.settled || progress.total > 1);

  return (
    <li className={`import-result state-${progress.state}`} data-testid="import-result" data-status={progress.state} data-source-id={sourceId ?? ''} data-name={result.name}>
      <div className="import-result-head">
        <span className={`state-badge state-${progress.state}`} data-testid="import-state">
          {STATE_LABEL[progress.state]}
        </span>
        <span className="import-name" title={result.name}>
          {result.name}
        </span>
        {progress.active > 0 && sourceId && (
          <button
            type="button"
            className="btn btn-small"
            data-testid="activity-abort"
            disabled={aborting.has(sourceId)}
            title="Stop importing this file: every remaining part"
            onClick={() => {
              setNotice(null);
              void abort(sourceId).then(setNotice);
            }}
          >
            {aborting.has(sourceId) ? 'Aborting…' : 'Abort'}
          </button>
        )}
      </div>
      <p className="import-detail" data-testid="import-detail">
        {detail}
      </p>
      {result.replaces && (
        <p className="import-replaces small" data-testid="import-replaces">
          {plainDetail(result.name, result.replaces)}
        </p>
      )}
      {showBar && (
        <div
          className="progress"
          role="progressbar"
          aria-label={`${result.name}: parts done`}
          aria-valuemin={0}
          aria-valuemax={progress.total}
          aria-valuenow={progress.done}
        >
          <span style={{ width: `${(100 * progress.done) / progress.total}%` }} />
          {progress.errors.length > 0 && (
            <span className="progress-failed" style={{ width: `${(100 * progress.errors.length) / progress.total}%` }} />
          )}
        </div>
      )}
      {stats && (
        <p className="import-meta small">
          <span className="import-stats">{stats}</span>
        </p>
      )}
      {progress.errors.length > 0 && (
        <ul className="import-errors" data-testid="import-errors">
          {[...new Set(progress.errors)].map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      )}
      {notice && <p className="muted small">{notice}</p>}
      {(rows.length > 0 || usage) && (
        <details className="import-parts-fold">
          <summary>{rows.length > 1 ? `Details: all ${rows.length} parts` : 'Details'}</summary>
          {usage && (
            <p className="import-meta small" data-testid="import-usage">
              Model use: {usage}
            </p>
          )}
          {rows.length > 0 && <PartList rows={rows} />}
        </details>
      )}
    </li>
  );
}

/** An import of an earlier visit, as the activity feed's summary row tells it. */
function EarlierImport({ row }: { row: ActivityRow }) {
  const running = isRunningRow(row);
  const counts = importCountsWords(row.counts);
  const stats = formatStats(row.stats);
  const errors = [...new Set(Object.values(row.errors ?? {}))];
  const badge = earlierImportBadge(row);
  return (
    <li className={`import-result state-${badge.state}`} data-testid="import-earlier" data-import-id={row.id}>
      <div className="import-result-head">
        <span className={`state-badge state-${badge.state}`} data-testid="import-earlier-state">
          {running ? 'Running' : badge.text}
        </span>
        <span className="import-name" title={row.label}>
          {row.label}
        </span>
      </div>
      {counts && <p className="import-detail">{counts}</p>}
      {row.error && <p className="import-detail">{row.error}</p>}
      {stats && <p className="import-meta small">{stats}</p>}
      {errors.length > 0 && (
        <ul className="import-errors">
          {errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      )}
      {Object.keys(row.refusals ?? {}).length > 0 && (
        <details className="import-parts-fold" data-testid="import-earlier-refusals">
          <summary>Refused files</summary>
          <ul className="import-errors">
            {Object.entries(row.refusals ?? {}).map(([name, why]) => (
              <li key={name}>
                {name}: {why}
              </li>
            ))}
          </ul>
        </details>
      )}
    </li>
  );
}

function PartList({ rows }: { rows: ActivityRow[] }) {
  return (
    <ol className="import-parts">
      {rows.map((row) => {
        const index = partIndex(row);
        const total = splitLabel(row.label).total ?? rows.length;
        return (
          <li key={`${row.id}@${row.queuedAt}`} data-testid="import-part" data-phase={row.phase}>
            <span className="part-index">{index !== null ? `${index}/${total}` : '·'}</span>
            <PhasePill phase={row.phase} />
            <span className="part-usage muted">
              {row.error ? <span className="error-text">{row.error}</span> : isRunningRow(row) ? '' : formatRowUsage(row)}
            </span>
          </li>
        );
      })}
    </ol>
  );
}

// ---------------------------------------------------------------------------
// The graph's sources (a placeholder for the graph's home view)

function GraphSources() {
  const { rows } = useActivity();
  const [sources, setSources] = useState<GraphSource[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const seq = useRef(0);

  const load = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const list = await api.getGraphSources();
      if (mine !== seq.current) return;
      setSources(list);
      setError(null);
    } catch (err) {
      if (mine === seq.current) setError(describeError(err).detail);
    }
  }, []);

  // Reload when a job lands in the graph (a lesson's too).
  const doneJobs = rows?.filter((r) => r.phase === 'done').length ?? 0;
  useEffect(() => {
    void load();
  }, [load, doneJobs]);

  const total = sources?.reduce((n, s) => n + s.propositions, 0) ?? 0;

  return (
    <section className="graph-sources" aria-labelledby="sources-heading">
      <div className="section-head">
        <h2 id="sources-heading">In your graph</h2>
        <button type="button" className="link-btn" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <p className="muted small">
        Where the graph&apos;s propositions come from. <Link to="/">See the graph</Link> on the home page.
        {sources && sources.length > 0 && ` ${total} proposition${total === 1 ? '' : 's'} from ${sources.length} source${sources.length === 1 ? '' : 's'}.`}
      </p>
      {error && (
        <p className="error-text small" role="alert">
          Could not load the graph&apos;s sources: {error}
        </p>
      )}
      {sources === null && !error && <p className="muted small">Loading…</p>}
      {sources && sources.length === 0 && <p className="muted empty-note">Nothing in the graph yet. Import notes above, or take a lesson.</p>}
      {sources && sources.length > 0 && (
        <ul className="source-list">
          {sources.map((s) => (
            <li key={s.id} className="graph-source" data-testid="graph-source" data-source-id={s.id} data-kind={s.kind ?? ''}>
              <span className={`kind-tag kind-${s.kind ?? 'unknown'}`}>{s.kind === 'chat' ? 'Lesson' : s.kind === 'notes' ? 'Notes' : 'Source'}</span>
              {s.kind === 'chat' ? (
                <Link to={`/chat/${encodeURIComponent(s.id)}`} className="source-title" title={s.title ?? s.id}>
                  {s.title ?? 'Untitled lesson'}
                </Link>
              ) : (
                <span className="source-title" title={s.title ?? s.id}>
                  {s.title ?? s.id}
                </span>
              )}
              <span className="source-count" data-testid="graph-source-count">
                {s.propositions} proposition{s.propositions === 1 ? '' : 's'}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
