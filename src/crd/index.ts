export * from './agent-job.ts';
export * from './common.ts';
export * from './duration.ts';
export * from './git-write-back.ts';
export * from './static-export-release.ts';
