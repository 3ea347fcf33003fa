import { defineConfig } from 'vitest/config';
import StableSequencer from './test/support/cluster/sequencer.ts';

// Three tiers, named for what they need: `unit` nothing but Node (loopback HTTP is fine; seconds),
// `tools` the real tools beside Node (helm, nginx, Chromium, the Distribution registry, cosign,
// skopeo: the Go-built ones are built once by the global setup), `integration` also a real control
// plane, started once by the global setup (or STATIC_EXPORT_TEST_KUBECONFIG).
export default defineConfig({
  test: {
    reporters: ['default', './test/support/reporting/summary-reporter.ts'],
    sequence: { sequencer: StableSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'tools',
          include: ['test/tools/**/*.test.ts'],
          globalSetup: ['test/support/tools/go-tools-setup.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: [
            'test/support/tools/go-tools-setup.ts',
            'test/support/cluster/control-plane-setup.ts',
          ],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
