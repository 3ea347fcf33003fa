// Log lines reach terminals (the CLI's stderr, kubectl logs of the operator): text an attacker chose
// (a status message, an API's answer in an error) must leave no control character a terminal obeys.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { captureLogs } from '../../support/cluster/operator.ts';
import { HOSTILE, TERMINAL_CONTROL } from '../../support/fixtures/hostile-text.ts';

describe('logger on a terminal', () => {
  it('writes every control character escaped, C1 CSI included, the values unchanged', async () => {
    const { lines, stream } = captureLogs();
    const log = createLogger({ destination: stream });
    log.warn({ reason: HOSTILE }, `failed: ${HOSTILE}`);
    log.error({ err: new Error(HOSTILE) }, 'failed');
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toMatch(TERMINAL_CONTROL);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ reason: HOSTILE, msg: `failed: ${HOSTILE}` });
    expect(JSON.parse(lines[1] ?? '').err.message).toBe(HOSTILE);
  });
});
