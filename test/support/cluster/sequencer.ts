// A fixed file order instead of vitest's duration-based one, so CI runs are reproducible: files
// that stop or restart the shared API server run last (after an outage the controller-manager,
// scheduler and kwok take a while to catch up, which later files must not depend on); the demo runs
// first, as it starts a real node of its own before the suite's (one per machine) is started.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const FIRST = /integration\/demo\.test\.ts$/;
const DISRUPTIVE = [
  /runtime\/informer\.test\.ts$/,
  /runtime\/leader-election\.test\.ts$/,
  /operator\/process\.test\.ts$/,
  /integration\/sync\.test\.ts$/,
];

export default class StableSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) =>
      FIRST.test(f.moduleId) ? -1 : DISRUPTIVE.some((re) => re.test(f.moduleId)) ? 1 : 0;
    return [...files].sort((a, b) => rank(a) - rank(b) || a.moduleId.localeCompare(b.moduleId));
  }
}
