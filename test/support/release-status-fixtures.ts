// StaticExportReleases as the operator leaves them, for the CLI's readers.
import type { StaticExportRelease } from '../../src/crd/index.ts';

export const VERSION = `sha256-${'ab'.repeat(32)}`;

export function servedRelease(
  namespace: string,
  name: string,
  over: Partial<StaticExportRelease['status']> = {},
) {
  return {
    apiVersion: 'staticexport.dev/v1alpha1',
    kind: 'StaticExportRelease',
    metadata: { namespace, name, generation: 1 },
    spec: { domain: 'docs.example.com', target: { valuesSecret: { name: 'docs-values' } } },
    status: {
      observedGeneration: 1,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Published',
          message: `Serving ${VERSION}`,
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
      current: {
        version: VERSION,
        expiresAt: '2026-01-01T02:00:00Z',
        renewalTime: '2026-01-01T01:20:00Z',
        rollout: {
          version: VERSION,
          startedAt: '2026-01-01T00:00:00Z',
          completedAt: '2026-01-01T00:00:30Z',
          workloads: [],
        },
      },
      history: [{ version: VERSION, appliedAt: '2026-01-01T00:00:00Z' }],
      ...over,
    },
  } as unknown as StaticExportRelease;
}

export function failingRelease(namespace: string, name: string, reason: string, message: string) {
  const r = servedRelease(namespace, name);
  (r.status as NonNullable<StaticExportRelease['status']>).conditions = [
    { type: 'Ready', status: 'False', reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' },
    { type: 'Stalled', status: 'True', reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' },
  ];
  return r;
}
