import { describe, expect, it } from 'vitest';
import {
  EXPORT_REVISIONS,
  exportTargetOf,
  jobOfTarget,
  jobRecord,
  recordedJobRef,
  revisionOfSpec,
} from '../../../src/api/index.ts';
import { EXPORT_REVISION_NAMES } from '../../../src/crd/static-export-release.ts';

describe('the registry of export API revisions', () => {
  it('names a job by the revision its status record says, and infers it for records that do not say', () => {
    expect(recordedJobRef({ jobId: 'se_1', revision: 'contract' })).toEqual({
      revision: 'contract',
      jobId: 'se_1',
    });
    expect(recordedJobRef({ jobId: 'j1', revision: 'current', projectId: 'acme' })).toEqual({
      revision: 'current',
      projectId: 'acme',
      jobId: 'j1',
    });
    // Written by an older operator: a project beside the id was the only sign of the current revision.
    expect(recordedJobRef({ jobId: 'se_1' })).toEqual({ revision: 'contract', jobId: 'se_1' });
    expect(recordedJobRef({ jobId: 'j1', projectId: 'acme' })).toEqual({
      revision: 'current',
      projectId: 'acme',
      jobId: 'j1',
    });
  });

  it('records a new job with its revision, and reads that record back as the same job', () => {
    for (const spec of [{ domain: 'docs.example.com' }, { projectId: 'acme', basePath: '/docs' as const }]) {
      const job = jobOfTarget(exportTargetOf(spec) ?? { domain: '' }, 'job-1');
      const record = jobRecord(job);
      expect(record.revision).toBe(revisionOfSpec(spec).name);
      expect(recordedJobRef(record)).toEqual(job);
    }
  });

  it('has a row for each revision the status schema can record, and only the current one has a start limit', () => {
    expect(Object.keys(EXPORT_REVISIONS).sort()).toEqual([...EXPORT_REVISION_NAMES].sort());
    expect(EXPORT_REVISIONS.contract.startLimit).toBeUndefined();
    expect(EXPORT_REVISIONS.current.startLimit).toEqual({ starts: 10, windowMs: 3_600_000 });
  });
});
