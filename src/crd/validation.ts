import { z } from 'zod';
import {
  PLATFORM_API_BASE_URL,
  VERSIONED_URL_PATTERN,
  versionedBaseUrlMessage,
  versionedBaseUrlRefusal,
} from '../api-base-url.ts';
import { DURATION_PATTERN, parseDuration } from './duration.ts';

// Each rule is written once and enforced twice: by zod at runtime (operator, CLI) and by the API
// server through CEL `x-kubernetes-validations`, so `kubectl apply` fails with the same message.

interface CelRule {
  rule: string;
  message: string;
  /** CEL transition rules (using oldSelf) are only checked on update. */
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

export function withCel<T extends z.ZodType>(schema: T, rules: CelRule[]): T {
  return schema.meta({ 'x-kubernetes-validations': rules }) as T;
}

/** A string that must match `pattern`; the message says what a good value looks like. */
export function matching(pattern: string, message: string, maxLength: number): z.ZodString {
  const re = new RegExp(pattern);
  return withCel(
    z
      .string()
      .max(maxLength)
      .refine((v) => re.test(v), message),
    // Raw CEL string: the pattern is passed to RE2 unchanged.
    [{ rule: `self.matches(r'${pattern}')`, message }],
  );
}

/** The longest duration any field takes. */
const MAX_DURATION = '8760h';
// CEL's duration() fails with "type conversion error" past int64 nanoseconds (about 292 years):
// the range rule only calls it on numbers of at most 5 digits, which 32 characters cannot add up to that.
const SMALL_DURATION = '^([0-9]{1,5}(ms|s|m|h))+$';

/** A Go-style duration from `min` (e.g. "1m") to MAX_DURATION. */
export function duration(field: string, min: string): z.ZodString {
  const minMs = parseDuration(min) ?? 0;
  const maxMs = parseDuration(MAX_DURATION) ?? Infinity;
  const format = `${field} must be a duration such as 30s, 15m, 1h or 1h30m`;
  const range = `${field} must be from ${min} to ${MAX_DURATION} (365 days)`;
  return withCel(
    z
      .string()
      .max(32)
      .refine((v) => parseDuration(v) !== undefined, format)
      .refine((v) => {
        const ms = parseDuration(v);
        return ms === undefined || (ms >= minMs && ms <= maxMs);
      }, range),
    [
      { rule: `self.matches(r'${DURATION_PATTERN}')`, message: format },
      {
        rule: `!self.matches(r'${DURATION_PATTERN}') || (self.matches(r'${SMALL_DURATION}') && duration(self) >= duration('${min}') && duration(self) <= duration('${MAX_DURATION}'))`,
        message: range,
      },
    ],
  );
}

export function immutable<T extends z.ZodType>(schema: T, field: string, hint: string): T {
  const meta = (schema.meta() ?? {}) as { 'x-kubernetes-validations'?: CelRule[] };
  const rules = meta['x-kubernetes-validations'] ?? [];
  return schema.meta({
    ...meta,
    'x-kubernetes-validations': [
      ...rules,
      { rule: 'self == oldSelf', message: `${field} is immutable: ${hint}` },
    ],
  }) as T;
}

const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$';
const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

export const objectName = (field: string) =>
  matching(
    DNS_SUBDOMAIN,
    `${field} must be a Kubernetes object name (lowercase letters, digits, '-' and '.')`,
    253,
  );

export const namespaceName = (field: string) =>
  matching(DNS_LABEL, `${field} must be a namespace name (lowercase letters, digits and '-')`, 63);

/** An admin API base URL: absolute http(s), without the API version the client adds itself. */
export const apiBaseUrl = (field: string) => {
  const message = `${field} must be an absolute http(s) URL such as ${PLATFORM_API_BASE_URL}`;
  const versioned = versionedBaseUrlMessage(field);
  return withCel(
    z
      .string()
      .max(2048)
      .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), message)
      .refine((v) => versionedBaseUrlRefusal(v, field) === undefined, versioned),
    [
      { rule: "isURL(self) && url(self).getScheme() in ['http', 'https']", message },
      {
        rule: `!self.matches(r'${VERSIONED_URL_PATTERN}')`,
        message: versioned,
      },
    ],
  );
};
