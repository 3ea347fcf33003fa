// Prints the run's totals as one plain closing line, `N passed, N failed, N skipped`, which CI
// tooling reads whatever the test runner, after the reasons tests gave for skipping (`skip(note)`),
// so a part that cannot run on a machine says why.
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const reasons = new Map<string, number>();
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const result = test.result();
        if (result.state === 'passed') counts.passed++;
        else if (result.state === 'failed') counts.failed++;
        else {
          counts.skipped++;
          if (result.state === 'skipped' && result.note) {
            const key = `${relative(process.cwd(), mod.moduleId)}: ${result.note}`;
            reasons.set(key, (reasons.get(key) ?? 0) + 1);
          }
        }
      }
    }
    for (const [reason, n] of reasons) process.stdout.write(`\n${n} skipped, ${reason}`);
    process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
