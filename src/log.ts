import { type DestinationStream, type Logger, pino } from 'pino';
import { scrub } from './redact.ts';
import { terminalSafeJson } from './terminal-text.ts';

export type { Logger } from 'pino';

interface LoggerOptions {
  level?: string;
  name?: string;
  /** Where JSON lines go; stderr by default so CLI stdout stays machine-readable. */
  destination?: DestinationStream;
}

// Field names that carry secrets wherever they appear in a log object.
const REDACT_PATHS = [
  'apiKey',
  'key',
  'authorization',
  'bundleUrl',
  'url',
  '*.apiKey',
  '*.key',
  '*.authorization',
  '*.bundleUrl',
  '*.url',
  'headers.authorization',
  '*.headers.authorization',
];

/** Scrubs every string in a log record, however deeply nested (objects, arrays, errors). */
function scrubDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    return {
      type: value.name,
      message: scrub(value.message),
      stack: value.stack ? scrub(value.stack) : undefined,
    };
  }
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubDeep(v, depth + 1)]));
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      name: options.name,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: { err: (e: unknown) => scrubDeep(e) },
      hooks: {
        // Any argument may quote upstream text (an error body, a values document): scrub all of it.
        logMethod(args, method) {
          method.apply(this, args.map((a) => scrubDeep(a)) as Parameters<typeof method>);
        },
        // Logs end up on terminals (stderr, kubectl logs): pino escapes C0 in strings, not C1.
        streamWrite: terminalSafeJson,
      },
    },
    options.destination ?? pino.destination(2),
  );
}
