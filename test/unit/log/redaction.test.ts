import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { registerSecret } from '../../../src/redact.ts';
import { captureLogs } from '../../support/cluster/operator.ts';

describe('logger redaction', () => {
  it('removes presigned link queries and registered keys at any depth of a record', async () => {
    const key = 'mint_0123456789abcdef';
    registerSecret(key);
    const { lines, stream } = captureLogs();
    const log = createLogger({ destination: stream });
    const url = 'http://127.0.0.1:1/bundles/se_1/bundle.tar.gz?expires=1&sig=deadbeef';
    log.info(
      { dbg: { values: `staticExport:\n  bundleUrl: ${url}\n`, nested: [{ note: `key ${key}` }] } },
      'record',
    );
    log.warn(new Error(`GET ${url} failed with Bearer ${key}`));
    log.info('interpolated %s', url);
    await new Promise((r) => setImmediate(r));
    const text = lines.join('\n');
    expect(lines).toHaveLength(3);
    expect(text).toContain('/bundles/se_1/bundle.tar.gz?[REDACTED]');
    expect(text).not.toContain('sig=deadbeef');
    expect(text).not.toContain(key);
  });
});
