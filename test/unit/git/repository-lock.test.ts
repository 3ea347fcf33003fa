// Holders of one key run one after the other; other keys do not wait; a caller that gives up
// while queued leaves the queue intact.
import { describe, expect, it } from 'vitest';
import { withRepositoryLock } from '../../../src/git/repository-lock.ts';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('withRepositoryLock', () => {
  it('runs holders of one key one at a time, in order; another key does not wait', async () => {
    const log: string[] = [];
    const job = (name: string) => async () => {
      log.push(`${name} start`);
      await tick();
      log.push(`${name} end`);
    };
    await Promise.all([
      withRepositoryLock('a', undefined, job('a1')),
      withRepositoryLock('a', undefined, job('a2')),
      withRepositoryLock('b', undefined, job('b1')),
    ]);
    expect(log.indexOf('a1 end')).toBeLessThan(log.indexOf('a2 start'));
    expect(log.indexOf('b1 start')).toBeLessThan(log.indexOf('a1 end'));
  });

  it('a failing holder releases the lock', async () => {
    await expect(
      withRepositoryLock('c', undefined, () => Promise.reject(new Error('push failed'))),
    ).rejects.toThrow('push failed');
    expect(await withRepositoryLock('c', undefined, async () => 'next')).toBe('next');
  });

  it('an abort while queued rejects with its reason, and the queue goes on', async () => {
    let release = () => {};
    const first = withRepositoryLock('d', undefined, () => new Promise<void>((r) => (release = r)));
    const controller = new AbortController();
    const queued = withRepositoryLock('d', controller.signal, async () => 'never');
    const third = withRepositoryLock('d', undefined, async () => 'third');
    controller.abort(new Error('release deleted'));
    await expect(queued).rejects.toThrow('release deleted');
    release();
    await first;
    expect(await third).toBe('third');
  });
});
