// The one definition of what names a deployment in the platform's current export API, used by the
// client and simulator (path segment, request body), the CLI (--project-id, --base-path) and the
// StaticExportRelease CRD (spec.projectId, spec.basePath, enforced by zod and the API server's CEL).

/**
 * A project id as it may stand in a path segment. The vendor documents no format (its examples are
 * 24 hex characters); what this refuses is what the simulator answers 400 for. RE2-compatible.
 */
export const PROJECT_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

/** The base paths a deployment can be exported for; omitted, the deployment's configured one applies. */
export const EXPORT_BASE_PATHS = ['', '/docs', '/documentation'] as const;

/** Export starts the platform allows per organization (admin key) in any hour; it answers 429 beyond. */
export const EXPORT_STARTS_PER_HOUR = 10;

/**
 * A start budget group's name (spec.startBudget.group, the CLI's --starts-group): a lowercase DNS
 * label, at most 63 characters. RE2-compatible.
 */
export const START_BUDGET_GROUP_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
export const START_BUDGET_GROUP_MAX_LENGTH = 63;
