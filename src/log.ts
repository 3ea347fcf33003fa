import { type DestinationStream, type Logger, pino } from 'pino';
import { scrub } from './redact.ts';

export type { Logger } from 'pino';

export interface LoggerOptions {
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

function scrubValue(value: unknown): unknown {
  if (typeof value === 'string') return scrub(value);
  if (value instanceof Error) {
    return {
      type: value.name,
      message: scrub(value.message),
      stack: value.stack ? scrub(value.stack) : undefined,
    };
  }
  return value;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      name: options.name,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: { err: (e: unknown) => scrubValue(e) },
      hooks: {
        // Messages and interpolation arguments may quote upstream text: scrub them too.
        logMethod(args, method) {
          method.apply(this, args.map(scrubValue) as Parameters<typeof method>);
        },
      },
    },
    options.destination ?? pino.destination(2),
  );
}
