// What `static-export check` concludes from the CRDs, the Lease and the operator's pods.
import { describe, expect, it } from 'vitest';
import { crdCheck, operatorCheck } from '../../../src/cli/cluster-checks.ts';

const NAME = 'staticexportreleases.staticexport.dev';
const established = (status: string, message?: string) => ({
  spec: { versions: [{ name: 'v1alpha1', served: true }] },
  status: { conditions: [{ type: 'Established', status, ...(message ? { message } : {}) }] },
});

describe('crdCheck', () => {
  it('passes an established CRD serving v1alpha1', () => {
    expect(crdCheck(NAME, established('True'))).toEqual({
      check: `CRD ${NAME}`,
      ok: true,
      message: 'v1alpha1 established',
    });
  });

  it('fails a missing, unestablished or other-version CRD, naming the fix', () => {
    expect(crdCheck(NAME, undefined).message).toMatch(
      /^not installed: install or upgrade them with the operator chart/,
    );
    expect(crdCheck(NAME, established('False', 'names conflict')).message).toContain(
      'not established yet (names conflict): the API server does not serve it',
    );
    const other = {
      spec: { versions: [{ name: 'v1beta1', served: true }] },
      status: established('True').status,
    };
    expect(crdCheck(NAME, other)).toMatchObject({
      ok: false,
      message: expect.stringMatching(
        /^serves v1beta1, not v1alpha1 that this CLI speaks: .* from the same release as this CLI$/,
      ),
    });
  });
});

describe('operatorCheck', () => {
  const now = new Date('2026-01-01T00:01:00Z');
  const seen = { namespace: 'static-export-system', leaseName: 'static-export-operator', now, pods: [] };
  const readyPod = {
    metadata: { name: 'op-1' },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  };

  it('passes while a replica holds the Lease, renewed within twice its duration', () => {
    const lease = { holderIdentity: 'op-1_abc', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:45Z' };
    expect(operatorCheck({ ...seen, lease })).toMatchObject({
      ok: true,
      message: 'running: op-1_abc holds the Lease static-export-system/static-export-operator',
    });
    expect(operatorCheck({ ...seen, lease: { ...lease, renewTime: '2026-01-01T00:00:20Z' } })).toMatchObject({
      ok: false,
      message: expect.stringContaining(
        'nobody holds the Lease static-export-system/static-export-operator (op-1_abc last renewed it at 2026-01-01T00:00:20Z); 0 Ready pod(s)',
      ),
    });
  });

  it('passes a Ready pod without a Lease (no leader election), and fails a released Lease', () => {
    expect(operatorCheck({ ...seen, lease: undefined, pods: [readyPod] })).toMatchObject({
      ok: true,
      message: 'running without leader election: pod op-1 Ready',
    });
    expect(operatorCheck({ ...seen, lease: { holderIdentity: '' }, pods: [readyPod] }).message).toContain(
      '(it was released); 1 Ready pod(s)',
    );
  });

  it('fails when there is neither, naming the flags that say where it runs', () => {
    expect(operatorCheck({ ...seen, lease: undefined })).toMatchObject({
      ok: false,
      message: expect.stringContaining(
        'install the operator chart there, or name where it runs with --operator-namespace and --lease-name',
      ),
    });
  });
});
