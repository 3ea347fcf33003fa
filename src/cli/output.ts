import { scrub } from '../redact.ts';
import { terminalSafe, terminalSafeJson } from '../terminal-text.ts';
import type { CliContext } from './context.ts';

/**
 * Where a command's progress and results go. stdout only carries the result (values YAML, or JSON
 * lines with --json) so it can be piped; human progress goes to stderr: a redrawn bar on a TTY,
 * one line per change otherwise. Everything passes through `scrub` except the result (values YAML, or
 * the values event with --json), which carries the link on purpose. Human lines may quote text from
 * elsewhere: their control characters are shown escaped (terminal-text.ts).
 */
type OutputMode = 'tty' | 'plain' | 'json';

interface ProgressUpdate {
  /** Stable key: plain mode prints a line only when this changes. */
  key: string;
  /** 0..100 when known. */
  percent?: number;
  text: string;
}

const BAR_WIDTH = 24;
const REDRAW_MS = 100;

export function formatElapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** A bundle download's progress, `received` of `total` bytes (when known); a new key each quarter. */
export function downloadProgress(received: number, total: number | undefined): ProgressUpdate {
  const percent = total ? (received / total) * 100 : undefined;
  return {
    key: `download:${percent === undefined ? '' : Math.floor(percent / 25)}`,
    ...(percent === undefined ? {} : { percent }),
    text: `downloading ${formatBytes(received)}${total ? ` of ${formatBytes(total)}` : ''}`,
  };
}

function bar(percent: number): string {
  const filled = Math.round((Math.max(0, Math.min(100, percent)) / 100) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(percent)).padStart(3)}%`;
}

const jsonLine = (name: string, fields: Record<string, unknown>) =>
  `${terminalSafeJson(JSON.stringify({ event: name, ...fields }))}\n`;

export class Reporter {
  readonly mode: OutputMode;
  private readonly ctx: CliContext;
  private lastKey: string | undefined;
  private lastDraw = 0;
  private barShown = false;

  constructor(ctx: CliContext, json: boolean) {
    this.ctx = ctx;
    this.mode = json ? 'json' : ctx.stderr.isTTY ? 'tty' : 'plain';
  }

  /** A machine-readable event: a JSON line on stdout in --json mode, nothing otherwise. */
  event(name: string, fields: Record<string, unknown> = {}): void {
    if (this.mode === 'json') this.ctx.stdout.write(scrub(jsonLine(name, fields)));
  }

  /** An event that is the command's result and must carry the bundle link (not scrubbed). */
  resultEvent(name: string, fields: Record<string, unknown>): void {
    if (this.mode === 'json') this.ctx.stdout.write(jsonLine(name, fields));
  }

  /** A human line on stderr (not in --json mode). */
  info(text: string): void {
    if (this.mode === 'json') return;
    this.endBar();
    this.ctx.stderr.write(`${terminalSafe(scrub(text))}\n`);
  }

  progress(update: ProgressUpdate): void {
    if (this.mode === 'json') return;
    const text = terminalSafe(
      scrub(update.percent === undefined ? update.text : `${bar(update.percent)} ${update.text}`),
    );
    if (this.mode === 'plain') {
      if (update.key !== this.lastKey) this.ctx.stderr.write(`${text}\n`);
      this.lastKey = update.key;
      return;
    }
    const now = Date.now();
    if (this.barShown && now - this.lastDraw < REDRAW_MS && update.percent !== 100) return;
    this.lastDraw = now;
    this.barShown = true;
    this.ctx.stderr.write(`\r\x1b[2K${text}`);
  }

  /** The command's result on stdout (values YAML), whatever the mode. */
  result(text: string): void {
    this.endBar();
    this.ctx.stdout.write(text);
  }

  /** The command's result for a human on stdout, one line each: no line can break or forge another. */
  resultLines(lines: readonly string[]): void {
    this.result(lines.map((l) => `${terminalSafe(l)}\n`).join(''));
  }

  error(message: string, exitCode: number): void {
    this.endBar();
    if (this.mode === 'json') this.event('error', { exitCode, message });
    else this.ctx.stderr.write(`error: ${terminalSafe(scrub(message))}\n`);
  }

  private endBar(): void {
    if (this.barShown) this.ctx.stderr.write('\n');
    this.barShown = false;
  }
}
