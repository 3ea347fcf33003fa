// Every reason the operator can write: what users alert on, search events for and read in
// `kubectl describe`. Conditions and Events take their reason from these lists (the types allow no
// other), and docs/spec/ documents each one (test/unit/docs/spec-reference.test.ts checks both ways).

/** Why something failed: Ready=False (and Stalled when the user must act) and a Warning Event. */
export const FAILURE_REASONS = [
  // StaticExportRelease
  'ExportFailed',
  'ExportTimedOut',
  'StartOutcomeUnknown',
  'PublishGateFailed',
  'RolloutStalled',
  'WorkloadNotFound',
  'PinnedVersionUnknown',
  'PinnedVersionMismatch',
  'PinnedJobGone',
  'BundleInvalid',
  'LinkRefused',
  // Registry source (spec.source.oci)
  'SignatureInvalid',
  'RegistryAuthFailed',
  'InvalidRegistryCredentials',
  'ImageNotFound',
  'ImageInvalid',
  'RegistryUnavailable',
  'InvalidConfiguration',
  // Git write-back (spec.gitWriteBack): the site keeps serving
  'GitUrlRefused',
  'GitSecretInvalid',
  'GitAuthRefused',
  'GitBranchProtected',
  'GitBranchMissing',
  'GitPathMissing',
  'GitFieldInvalid',
  'GitNonFastForward',
  'GitRedirected',
  'GitUnreachable',
  'GitHostKeyUnknown',
  'GitUnsupported',
  // Both kinds: credentials, the admin API, the spec, the target
  'SecretNotFound',
  'SecretKeyNotFound',
  'NoCredentials',
  'InvalidCredentials',
  'AuthenticationFailed',
  'NotEntitled',
  'RateLimited',
  'ApiUnavailable',
  'ProjectNotFound',
  'RevisionUnavailable',
  'InvalidRequest',
  'ExportConflict',
  'NoApiBaseUrl',
  'ApiBaseUrlNotAllowed',
  'InvalidSpec',
  'TargetMisconfigured',
  'TargetFailed',
  'ReconcileError',
  // AgentJob
  'CreateOutcomeUnknown',
  'WaitingForBudget',
  'AgentFailed',
  'JobNotFound',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** Reasons of the conditions of both kinds (Ready, Reconciling, Stalled, Exporting). */
export const CONDITION_REASONS = [
  // StaticExportRelease
  'Published',
  'Exporting',
  'Idle',
  'RollingOut',
  'Syncing',
  'WaitingForStartBudget',
  'ExportBusy',
  // GitWriteBack (spec.gitWriteBack), besides its failure reasons
  'Committed',
  'WriteBackPending',
  // AgentJob
  'Creating',
  'Running',
  'Completed',
  'Archived',
  ...FAILURE_REASONS,
] as const;
export type ConditionReason = (typeof CONDITION_REASONS)[number];

/** Reasons of the Events the operator records. */
export const EVENT_REASONS = [
  'ExportStarted',
  'ExportJoined',
  'ExportCompleted',
  'ExportVanished',
  'ExportBusy',
  'StartBudgetOvercommitted',
  'Unchanged',
  'Published',
  'LinkRenewed',
  'TargetRepaired',
  'RollingOut',
  'RolledOut',
  'Syncing',
  'Synced',
  'TriggerAccepted',
  'Committed',
  'Created',
  'Completed',
  'Archived',
  ...FAILURE_REASONS,
] as const;
export type EventReason = (typeof EVENT_REASONS)[number];
