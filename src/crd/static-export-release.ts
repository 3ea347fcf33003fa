import { z } from 'zod';
import { BARE_HOST_PATTERN, BARE_HOST_RULE, MAX_DOMAIN_LENGTH } from '../domain.ts';
import {
  EXPORT_BASE_PATHS,
  EXPORT_STARTS_PER_HOUR,
  PROJECT_ID_PATTERN,
  START_BUDGET_GROUP_MAX_LENGTH,
  START_BUDGET_GROUP_PATTERN,
} from '../project.ts';
import {
  conditionsSchema,
  GROUP_VERSION,
  metadataSchema,
  observedGenerationSchema,
  pendingCallSchema,
  secretKeyRef,
  secretKeySelector,
  timestamp,
  withCel,
} from './common.ts';
import { gitWriteBackSchema } from './git-write-back.ts';
import { DURATION_LIMIT, PAGE_DROP_PATTERN, pageDropPercent, SAMPLE_LIMIT } from './limits.ts';
import { apiBaseUrl, duration, matching, namespaceName, objectName } from './validation.ts';

export const SER_KIND = 'StaticExportRelease';
export const SER_PLURAL = 'staticexportreleases';
/** Any new value of this annotation asks for an export now. */
export const REQUESTED_AT_ANNOTATION = 'staticexport.dev/requested-at';
/** Flux's request annotation (`flux reconcile`-style tools set it): honoured the same way. */
export const RECONCILE_REQUEST_ANNOTATION = 'reconcile.fluxcd.io/requestedAt';
export const HISTORY_LIMIT = 10;

const VERSION = '^sha256-[0-9a-f]{64}$';

const VALUES_KEY_PATTERN = '^[-._a-zA-Z0-9]+$';
const VALUES_KEY_FORMAT =
  "spec.target.valuesSecret.key must be a Secret data key (letters, digits, '-', '_' and '.')";
const VALUES_KEY_RESERVED =
  'spec.target.valuesSecret.key must not be bundleUrl or version: the Secret holds those keys for the site chart';
// The values document's key; `bundleUrl` and `version` are the chart's own keys in the same Secret.
const secretDataKey = withCel(
  z
    .string()
    .max(253)
    .refine((v) => new RegExp(VALUES_KEY_PATTERN).test(v), VALUES_KEY_FORMAT)
    .refine((v) => v !== 'bundleUrl' && v !== 'version', VALUES_KEY_RESERVED),
  [
    { rule: `self.matches(r'${VALUES_KEY_PATTERN}')`, message: VALUES_KEY_FORMAT },
    { rule: "!(self in ['bundleUrl', 'version'])", message: VALUES_KEY_RESERVED },
  ],
);

/** Default name of the values Secret a GitOps target writes when `secretName` is not set. */
export const defaultSecretName = (release: string) => `${release}-values`;
/** Default name of the Flux target's version ConfigMap when `configMapName` is not set. */
export const defaultConfigMapName = (release: string) => `${release}-version`;

const gitopsSecretName = (field: string) =>
  objectName(`${field}.secretName`)
    .optional()
    .describe(
      'The values Secret the operator writes (keys bundleUrl, version and values.yaml) in the namespace of the StaticExportRelease; default <release name>-values. The chart reads it through staticExport.existingSecret: the link never enters the GitOps object.',
    );

const targetSchema = withCel(
  z
    .object({
      fluxHelmRelease: z
        .object({
          name: objectName('spec.target.fluxHelmRelease.name').describe(
            'The HelmRelease (helm.toolkit.fluxcd.io/v2) of the static-export-site chart, in the namespace of the StaticExportRelease.',
          ),
          secretName: gitopsSecretName('spec.target.fluxHelmRelease'),
          configMapName: objectName('spec.target.fluxHelmRelease.configMapName')
            .optional()
            .describe(
              'The ConfigMap the operator writes the version to (key version), which the HelmRelease reads with valuesFrom targetPath staticExport.version; default <release name>-version.',
            ),
        })
        .optional()
        .describe(
          'A Flux HelmRelease: the operator writes the values Secret and the version ConfigMap (both labelled reconcile.fluxcd.io/watch: Enabled) and sets reconcile.fluxcd.io/requestedAt on the HelmRelease; it never changes its spec.',
        ),
      argoApplication: z
        .object({
          name: objectName('spec.target.argoApplication.name').describe(
            'The Application of the static-export-site chart.',
          ),
          namespace: namespaceName('spec.target.argoApplication.namespace')
            .optional()
            .describe(
              'Namespace of the Application (often argocd); default the namespace of the StaticExportRelease. Its spec.destination.namespace must be that of the StaticExportRelease, where the values Secret is.',
            ),
          secretName: gitopsSecretName('spec.target.argoApplication'),
        })
        .optional()
        .describe(
          'An Argo CD Application (argoproj.io/v1alpha1): the operator writes the values Secret and sets the Helm parameter staticExport.version of the source that sets staticExport.existingSecret to that Secret.',
        ),
      valuesSecret: z
        .object({
          name: objectName('spec.target.valuesSecret.name').describe(
            'The Secret to write, in the namespace of the StaticExportRelease (created and owned by it).',
          ),
          key: secretDataKey
            .default('values.yaml')
            .describe(
              'Key of the values document (helm -f, Flux valuesFrom); bundleUrl and version are keys of their own.',
            ),
        })
        .optional()
        .describe('Write the staticExport values as YAML into a Secret owned by this resource.'),
    })
    .describe('Where the staticExport values (enabled, bundleUrl, version) are written. Exactly one.'),
  [
    {
      rule: '[has(self.fluxHelmRelease), has(self.argoApplication), has(self.valuesSecret)].filter(x, x).size() == 1',
      message: 'spec.target must set exactly one of valuesSecret, fluxHelmRelease or argoApplication',
    },
  ],
);

const PAGE_DROP_MESSAGE =
  'spec.publishGate.maxPageDrop must be a percentage such as "50%" or a whole number from 0 to 100';

const publishGateSchema = z
  .object({
    minPages: z
      .number()
      .int('spec.publishGate.minPages must be a whole number')
      .min(0, 'spec.publishGate.minPages must be 0 or more')
      .default(1)
      .describe('Fewest HTML pages a new version must have (the root 404.html does not count).'),
    maxPageDrop: z
      .union([z.number(), z.string()])
      .refine((v) => pageDropPercent(v) !== undefined, PAGE_DROP_MESSAGE)
      .meta({
        'x-kubernetes-int-or-string': true,
        'x-kubernetes-validations': [
          {
            rule: `type(self) == int ? (self >= 0 && self <= 100) : self.matches(r'${PAGE_DROP_PATTERN}')`,
            message: PAGE_DROP_MESSAGE,
          },
        ],
      })
      .default('50%')
      .describe(
        'Largest drop in page count against the version served now: "50%" or 50 (percent); "100%" sets no limit.',
      ),
    disabled: z
      .boolean()
      .default(false)
      .describe('Publish whatever the export holds, without the checks (index.html, minPages, maxPageDrop).'),
  })
  .default({ minPages: 1, maxPageDrop: '50%', disabled: false })
  .describe(
    'Checks a new version must pass before it is published: index.html at its root, at least minPages pages, and no larger page drop than maxPageDrop. A failing version is not published (Ready=False, reason PublishGateFailed); the served one stays.',
  );

// registry host[:port] then the repository path, as in an image reference without tag or digest.
const OCI_REPOSITORY_PATTERN =
  '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+((\\.|_|__|-+)[a-z0-9]+)*)+$';
const OCI_TAG_PATTERN = '^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$';

const ociSourceSchema = z
  .object({
    repository: matching(
      OCI_REPOSITORY_PATTERN,
      'spec.source.oci.repository must be REGISTRY/REPOSITORY without tag or digest, such as registry.internal:5000/docs/docs.example.com',
      255,
    ).describe('Registry host (with port) and repository the site images are pushed to.'),
    tag: matching(
      OCI_TAG_PATTERN,
      'spec.source.oci.tag must be an OCI tag (letters, digits, _ . -, at most 128, not starting with . or -)',
      128,
    )
      .default('latest')
      .describe(
        'Tag to follow: each new digest under it is verified, checked and published. A version tag (sha256-…) pins that version.',
      ),
    credentialsSecretRef: secretKeyRef('spec.source.oci.credentialsSecretRef', {
      defaultKey: '.dockerconfigjson',
      what: 'a Docker config JSON ({"auths": {"<registry>": {"auth": "<base64 user:password>"}}})',
      describe:
        'Secret with the registry credentials, e.g. a kubernetes.io/dockerconfigjson Secret (the same one can be an imagePullSecret of the site pods). Absent: anonymous.',
    }).optional(),
    caSecretRef: secretKeyRef('spec.source.oci.caSecretRef', {
      defaultKey: 'ca.crt',
      what: "the PEM CA bundle that signed the registry's TLS certificate",
      describe:
        'Secret with the CA bundle to trust for the registry (an internal CA). Absent: the system CAs.',
    }).optional(),
    verify: z
      .object({
        publicKeySecretRef: secretKeyRef('spec.source.oci.verify.publicKeySecretRef', {
          defaultKey: 'cosign.pub',
          what: 'the PEM public key (as `cosign generate-key-pair` or openssl writes it)',
          describe: 'Secret with the public key the image signatures must verify with.',
        }),
      })
      .optional()
      .describe(
        'Publish only images with a cosign signature (tag sha256-<digest>.sig) made by this key; others: Ready=False, reason SignatureInvalid, nothing published.',
      ),
    interval: duration('spec.source.oci.interval', '10s')
      .default('5m')
      .describe('How often the tag is resolved to look for a new digest.'),
  })
  .describe(
    'Follow a site image in an OCI registry (inside an air gap: images pushed by static-export mirror) instead of exporting from the platform.',
  );

const PLATFORM_ONLY = [
  'domain',
  'projectId',
  'basePath',
  'startBudget',
  'credentialsSecretRef',
  'apiBaseUrl',
  'export',
  'interval',
  'renewBefore',
  'pinnedVersion',
] as const;
const SOURCE_MESSAGE =
  'a StaticExportRelease has exactly one source: either spec.projectId or spec.domain, with spec.credentialsSecretRef (the platform export), or spec.source.oci (a registry)';
const REVISION_MESSAGE =
  "a platform StaticExportRelease names exactly one of spec.projectId (the platform's current export API, by project) or spec.domain (the contract's export API, by domain): remove the other";
const CURRENT_ONLY_MESSAGE =
  'spec.basePath and spec.startBudget belong to the current export API: set them only with spec.projectId';
const CONTRACT_ONLY_MESSAGE =
  "spec.export (versionLabel, paths) belongs to the contract's export API: set it only with spec.domain (the current API exports the whole deployment)";
const OCI_EXCLUSIVE_MESSAGE = `spec.source.oci cannot be combined with ${PLATFORM_ONLY.map((f) => `spec.${f}`).join(', ')}: those belong to the platform source (the follow interval is spec.source.oci.interval; pin a version by following its tag)`;

const sourceRules = [
  {
    rule: 'has(self.source) || ((has(self.domain) || has(self.projectId)) && has(self.credentialsSecretRef))',
    message: SOURCE_MESSAGE,
  },
  { rule: '!(has(self.domain) && has(self.projectId))', message: REVISION_MESSAGE },
  {
    rule: 'has(self.projectId) || !(has(self.basePath) || has(self.startBudget))',
    message: CURRENT_ONLY_MESSAGE,
  },
  { rule: '!(has(self.projectId) && has(self.export))', message: CONTRACT_ONLY_MESSAGE },
  {
    rule: `!has(self.source) || ![${PLATFORM_ONLY.map((f) => `has(self.${f})`).join(', ')}].exists(x, x)`,
    message: OCI_EXCLUSIVE_MESSAGE,
  },
];

const STARTS_PER_HOUR_MESSAGE = `spec.startBudget.startsPerHour must be a whole number from 1 to ${EXPORT_STARTS_PER_HOUR}`;

const specObject = z
  .object({
    domain: matching(BARE_HOST_PATTERN, `spec.domain must be ${BARE_HOST_RULE}`, MAX_DOMAIN_LENGTH)
      .optional()
      .describe(
        "Domain of the documentation site to export with the contract's export API (/v1/static-export/jobs). Exactly one of domain or projectId.",
      ),
    projectId: matching(
      PROJECT_ID_PATTERN,
      'spec.projectId must be the project id of the deployment (1 to 64 letters, digits, "_" or "-"), as the dashboard shows it',
      64,
    )
      .optional()
      .describe(
        `Project to export with the platform's current export API (/v1/static-export/{projectId}/jobs): one active job per deployment, ${EXPORT_STARTS_PER_HOUR} starts per organization per hour. Exactly one of domain or projectId.`,
      ),
    basePath: z
      .enum(EXPORT_BASE_PATHS, {
        message: `spec.basePath must be one of ${EXPORT_BASE_PATHS.map((p) => `"${p}"`).join(', ')} (absent: the deployment's configured base path)`,
      })
      .optional()
      .describe(
        'Base path the export is made for: "", "/docs" or "/documentation" (only with spec.projectId). Absent: the deployment\'s configured base path.',
      ),
    startBudget: z
      .object({
        group: matching(
          START_BUDGET_GROUP_PATTERN,
          'spec.startBudget.group must be a lowercase name (letters, digits and "-", at most 63)',
          START_BUDGET_GROUP_MAX_LENGTH,
        )
          .optional()
          .describe(
            'Releases naming the same group share one budget of export starts per hour (one organization with several admin keys). Absent: the group is the admin key (each key is one organization; a rotated key keeps the count).',
          ),
        startsPerHour: z
          .number({ message: STARTS_PER_HOUR_MESSAGE })
          .int({ message: STARTS_PER_HOUR_MESSAGE })
          .min(1, { message: STARTS_PER_HOUR_MESSAGE })
          .max(EXPORT_STARTS_PER_HOUR, {
            message: `${STARTS_PER_HOUR_MESSAGE} (the organization's whole hour)`,
          })
          .optional()
          .describe(
            `The group's share of the organization's ${EXPORT_STARTS_PER_HOUR} starts per hour, when other clusters or pipelines start exports of the same organization (the least any release of the group names counts). Absent: the operator's --start-budget-per-hour (default ${EXPORT_STARTS_PER_HOUR}).`,
          ),
      })
      .optional()
      .describe(
        "The hourly start budget this release's exports count against (only with spec.projectId). The operator queues starts within it instead of meeting the platform's 429.",
      ),
    credentialsSecretRef: secretKeySelector('spec.credentialsSecretRef').optional(),
    source: z
      .object({ oci: ociSourceSchema })
      .optional()
      .describe(
        'Where versions come from instead of the platform export (spec.domain); absent: the platform.',
      ),
    apiBaseUrl: apiBaseUrl('spec.apiBaseUrl')
      .optional()
      .describe("Admin API base URL; the operator's default otherwise."),
    export: z
      .object({
        versionLabel: z
          .string()
          .min(1)
          .max(128)
          .optional()
          .describe('Free-form label sent with the export job.'),
        paths: z
          .array(
            matching('^/', 'spec.export.paths entries must be site paths starting with /', 2048).describe(
              'A page path, such as /guides/start.',
            ),
          )
          .max(1000)
          .optional()
          .describe('Export only these pages.'),
      })
      .optional()
      .describe('Options of the export job the platform runs.'),
    interval: duration('spec.interval', '1m')
      .optional()
      .describe('How often to look for new content; absent means only when triggered.'),
    renewBefore: duration('spec.renewBefore', '1s')
      .optional()
      .describe("Renew the bundle link this long before it expires; default a third of the link's lifetime."),
    pinnedVersion: matching(
      VERSION,
      'spec.pinnedVersion must be a content version from status.history, like sha256-<64 hex digits>',
      71,
    )
      .optional()
      .describe('Keep serving this version; only its link is renewed.'),
    suspend: z.boolean().default(false).describe('Stop all API calls and writes for this release.'),
    rollout: z
      .object({
        onNewContent: z
          .enum(['Rollout', 'Sync'])
          .default('Rollout')
          .describe(
            "Rollout (the default): a new version rolls the workloads (pod template annotation staticexport.dev/version); every new pod downloads it before it serves. Sync: the values Secret is updated and the pod template left alone; the site chart's content sync sidecars (staticExport.sync.enabled) download the version beside the served one and swap to it, and status.current.rollout completes once every ready pod reports serving it (pod condition staticexport.dev/ContentServed). A pin to a version the pods still keep is a swap, not a download. spec.rollout.onLinkRenewal does not apply: the sidecars read the link from the Secret.",
          ),
        onLinkRenewal: z
          .enum(['Rollout', 'None'])
          .default('None')
          .describe(
            'None (the default): a renewed link only rewrites the values Secret; pods read the link when they start, so one started later takes the current link. Rollout: a renewal also rolls the workloads (pod template annotation staticexport.dev/renewed-at), proving the download path at each renewal at the cost of a roll per renewal. With fluxHelmRelease or argoApplication the GitOps tool rolls the pods of the chart (on a new version only); the operator rolls only spec.rollout.workloadRefs.',
          ),
        workloadRefs: z
          .array(
            z
              .object({
                kind: z
                  .enum(['Deployment', 'StatefulSet'])
                  .describe(
                    'Deployment or StatefulSet (apps/v1), in the namespace of the StaticExportRelease.',
                  ),
                name: objectName('spec.rollout.workloadRefs[].name').describe('Name of the workload.'),
              })
              .describe('A workload to roll.'),
          )
          .max(32)
          .optional()
          .describe(
            "Workloads to roll besides the site chart's (those labelled staticexport.dev/values-secret=<spec.target.valuesSecret.name>, found on their own).",
          ),
        timeout: duration('spec.rollout.timeout', '1s')
          .default('10m')
          .describe(
            'A rollout not complete after this long is reported: Ready=False, reason RolloutStalled.',
          ),
      })
      .default({ onNewContent: 'Rollout', onLinkRenewal: 'None', timeout: '10m' })
      .describe(
        'How the workloads that serve this release are rolled when a new version is published (pod template annotation staticexport.dev/version) or the link renewed.',
      ),
    publishGate: publishGateSchema,
    trigger: z
      .object({
        tokenSecretRef: secretKeyRef('spec.trigger.tokenSecretRef', {
          defaultKey: 'token',
          what: 'the trigger token (surrounding whitespace is ignored)',
          describe:
            'Secret holding the token that signs trigger calls (HMAC-SHA256); whoever holds it can ask for exports of this release, nothing more.',
        }),
      })
      .optional()
      .describe(
        "Accept signed calls to the operator's trigger receiver (POST /hooks/<namespace>/<name>, operator flag --trigger-address) as a request for an export now, like the staticexport.dev/requested-at annotation. Absent: calls for this release get 404.",
      ),
    target: targetSchema,
    gitWriteBack: gitWriteBackSchema.optional(),
  })
  .describe(
    'Which site to follow (a platform export, or site images in an OCI registry), how often, and where the result goes.',
  );

export const staticExportReleaseSpecSchema = withCel(
  specObject
    .refine(
      (s) =>
        s.source !== undefined ||
        ((s.domain !== undefined || s.projectId !== undefined) && s.credentialsSecretRef !== undefined),
      { message: SOURCE_MESSAGE },
    )
    .refine((s) => s.domain === undefined || s.projectId === undefined, { message: REVISION_MESSAGE })
    .refine((s) => s.projectId !== undefined || (s.basePath === undefined && s.startBudget === undefined), {
      message: CURRENT_ONLY_MESSAGE,
    })
    .refine((s) => s.projectId === undefined || s.export === undefined, { message: CONTRACT_ONLY_MESSAGE })
    .refine((s) => s.source === undefined || PLATFORM_ONLY.every((f) => s[f] === undefined), {
      message: OCI_EXCLUSIVE_MESSAGE,
    }),
  sourceRules,
);

/** A job of the current export API is named by its project too; absent: a job of the contract's API. */
const jobProject = (what: string) =>
  z
    .string()
    .optional()
    .describe(
      `The project of ${what} when it is a job of the current export API (spec.projectId when it started); absent for a job of the contract's API (spec.domain). A job is always read back through the API that started it.`,
    );

/** The revisions of the platform's export API a job can be started through (src/api/export-revisions/). */
export const EXPORT_REVISION_NAMES = ['contract', 'current'] as const;

/** Which export API started a job; absent in records of operators before it was recorded. */
const jobRevision = (what: string) =>
  z
    .enum(EXPORT_REVISION_NAMES)
    .optional()
    .describe(
      `The export API ${what} was started through: contract (spec.domain, the contract's API) or current (spec.projectId, the platform's current API). Absent in records written by operators that did not record it: then projectId tells (set: current).`,
    );

const exportStatusSchema = z.object({
  jobId: z
    .string()
    .optional()
    .describe("The export job's id on the platform, recorded as soon as it started."),
  revision: jobRevision('the export job'),
  projectId: jobProject('the export job'),
  state: z
    .string()
    .optional()
    .describe(
      'queued, running, completed or failed as the platform reports it (vanished: it no longer exists; timedOut: it did not finish within its deadline and counts as failed).',
    ),
  progress: z.number().optional().describe('Percent done, as the platform reports it.'),
  pageCount: z.number().int().optional().describe('Pages exported so far, as the platform reports it.'),
  startedAt: timestamp().optional().describe('When the operator started the job.'),
  finishedAt: timestamp().optional().describe('When the operator saw the job finish.'),
  message: z.string().optional().describe('Why the job failed or vanished.'),
  generation: z
    .number()
    .int()
    .optional()
    .describe('The metadata.generation this export was started for: a later spec change exports again.'),
  publishGateFailure: z
    .string()
    .optional()
    .describe('Why the publish gate refused this export; the served version stayed.'),
  progressSamples: z
    .array(
      z.object({
        at: timestamp().describe('When the poll was made.'),
        progress: z
          .number()
          .describe('The progress (0-100) the platform reported; 0 while the job was queued.'),
      }),
    )
    .max(SAMPLE_LIMIT)
    .optional()
    .describe(
      "Progress seen by the operator's polls: the first value and the latest changes (the last look at 0 % only until progress was seen twice). The poll schedule estimates when the job ends from them.",
    ),
  joined: z
    .boolean()
    .optional()
    .describe(
      'True when this release joined an export job another release started for the same domain, admin key and export options, instead of starting its own.',
    ),
});

const rolloutStatusSchema = z
  .object({
    version: z
      .string()
      .describe('The version rolled out (the staticexport.dev/version annotation) or synced.'),
    via: z
      .literal('Sync')
      .optional()
      .describe(
        'Sync when the version reached the pods through their content sync sidecars (spec.rollout.onNewContent Sync); absent when the workloads rolled.',
      ),
    renewedAt: timestamp().optional().describe('The staticexport.dev/renewed-at annotation rolled out.'),
    startedAt: timestamp().describe('When the workloads were rolled (or, with Sync, the version published).'),
    completedAt: timestamp()
      .optional()
      .describe(
        'When every workload had all its replicas updated and available (with Sync: every ready pod served the version).',
      ),
    stalled: z
      .string()
      .optional()
      .describe('Why the rollout is reported as stalled (Ready=False, RolloutStalled).'),
    workloads: z
      .array(
        z
          .object({
            kind: z.string().describe('Deployment or StatefulSet.'),
            name: z.string().describe('Name of the workload.'),
            generation: z.number().int().describe("The workload's metadata.generation the roll produced."),
          })
          .describe('A workload rolled.'),
      )
      .max(64)
      .describe('The workloads rolled, each with the generation its roll produced.'),
  })
  .describe('The last roll of the workloads serving this release.');

const staticExportReleaseStatusSchema = z
  .object({
    observedGeneration: observedGenerationSchema,
    conditions: conditionsSchema.optional(),
    start: pendingCallSchema('Starting', 'start export call').optional(),
    export: exportStatusSchema.optional().describe('The export job in flight or last run.'),
    recentStarts: z
      .array(timestamp())
      .max(EXPORT_STARTS_PER_HOUR)
      .optional()
      .describe(
        `When this release started export jobs of the current export API in the last hour, newest first: a restarted operator counts them against the start budget (${EXPORT_STARTS_PER_HOUR} per organization and hour) before it starts another.`,
      ),
    waiting: z
      .object({
        reason: z
          .enum(['WaitingForStartBudget', 'ExportBusy'])
          .describe(
            "WaitingForStartBudget: the group's hourly start budget has no slot for this release yet. ExportBusy: the platform answered 409, a job it did not start (or whose start's outcome was unknown) is active for the deployment.",
          ),
        since: timestamp().describe('When the release began to wait.'),
        until: timestamp().describe('When it starts (or asks for its slot) again.'),
        sibling: z
          .string()
          .optional()
          .describe(
            'ExportBusy for a release of the same project with another spec.basePath (namespace/name) whose export job is active: one job per project may be active, so this release waits for it without asking the platform.',
          ),
        refusedUntil: timestamp()
          .optional()
          .describe(
            'The platform refused a start of the group (429): no release of the start budget group starts before then. A restarted operator holds the group until then too.',
          ),
        message: z.string().describe('What it waits for, as the Reconciling condition says.'),
      })
      .optional()
      .describe(
        'An export start that waits (shown as Reconciling=True with this reason); cleared when it starts.',
      ),
    oci: z
      .object({
        digest: z
          .string()
          .optional()
          .describe('The manifest digest spec.source.oci.tag pointed to at the last check.'),
        checkedAt: timestamp().optional().describe('When the tag was last resolved.'),
        rejected: z
          .object({
            digest: z.string().describe('The manifest digest refused.'),
            generation: z
              .number()
              .int()
              .optional()
              .describe('The spec generation whose publish gate refused it.'),
            message: z.string().describe('Why.'),
          })
          .optional()
          .describe('A digest the publish gate refused: not pulled again until the spec changes.'),
      })
      .optional()
      .describe('What the registry source (spec.source.oci) showed at the last check.'),
    current: z
      .object({
        version: z
          .string()
          .optional()
          .describe(
            'The version served: the content version (sha256- and a digest of the files) of a platform export, or REGISTRY/REPOSITORY@sha256:DIGEST of a registry source.',
          ),
        contentVersion: z
          .string()
          .optional()
          .describe("The content version (sha256-…) of a registry source's site files."),
        jobId: z
          .string()
          .optional()
          .describe('The export job whose bundle is served (its link is renewed from it).'),
        revision: jobRevision('the job served'),
        projectId: jobProject('the job served'),
        jobMissingSince: timestamp()
          .optional()
          .describe(
            "When the platform first answered 404 for the served job's link: a second 404 a minute later or more confirms the job is purged (a new export then replaces it); a fresh link clears it.",
          ),
        sizeBytes: z.number().int().optional().describe('Size of the bundle archive.'),
        pageCount: z
          .number()
          .int()
          .optional()
          .describe('HTML pages of the served site: the baseline of spec.publishGate.maxPageDrop.'),
        expiresAt: timestamp().optional().describe('When the bundle link written to the target expires.'),
        renewalTime: timestamp()
          .optional()
          .describe('When the operator renews the link (spec.renewBefore ahead).'),
        appliedAt: timestamp().optional().describe('When the target was last written.'),
        renewedAt: timestamp()
          .optional()
          .describe(
            'When the link was last renewed (a renewal rolls the workloads when spec.rollout.onLinkRenewal is Rollout).',
          ),
        rollout: rolloutStatusSchema.optional(),
        gitCommit: z
          .string()
          .optional()
          .describe(
            'The Git commit (spec.gitWriteBack) that holds this version; absent until it is written.',
          ),
        gitTarget: z
          .string()
          .optional()
          .describe(
            'Where gitCommit was written (path, field, branch and repository): a spec.gitWriteBack naming another place writes again.',
          ),
      })
      .optional()
      .describe('What the target serves now. The bundle link itself is never stored here.'),
    history: z
      .array(
        z
          .object({
            version: z.string().describe('The version published (as status.current.version).'),
            jobId: z
              .string()
              .optional()
              .describe(
                'The export job it came from (spec.pinnedVersion serves it again); none for a registry source.',
              ),
            revision: jobRevision('that job'),
            projectId: jobProject('that job'),
            pageCount: z.number().int().optional().describe('Its HTML pages.'),
            appliedAt: timestamp().describe('When it was published.'),
          })
          .describe('A version published.'),
      )
      .max(HISTORY_LIMIT)
      .optional()
      .describe(
        `The last ${HISTORY_LIMIT} versions published, newest first: what spec.pinnedVersion can name.`,
      ),
    lastHandledRequestedAt: z
      .string()
      .optional()
      .describe(
        `The last value of the ${REQUESTED_AT_ANNOTATION} annotation handled (an export was started for it).`,
      ),
    lastHandledReconcileAt: z
      .string()
      .optional()
      .describe(
        `The last value of the ${RECONCILE_REQUEST_ANNOTATION} annotation handled (an export was started for it): Flux's convention.`,
      ),
    exportDurationsSeconds: z
      .array(z.number().min(0).describe('Seconds from start to completion.'))
      .max(DURATION_LIMIT)
      .optional()
      .describe(
        "How long this site's last completed exports took, newest first: the poll schedule expects the next one to take about as long (their median).",
      ),
    exportFailures: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'Exports in a row that ended without a publish (failed, timed out, or refused by the publish gate); cleared by a publish. While nothing is served, the next try waits 5 minutes doubled for each, at most spec.interval or an hour.',
      ),
  })
  .meta({ default: {} })
  .describe('What the operator observed and did; written only by the operator.');

const staticExportReleaseSchema = z.object({
  apiVersion: z.literal(GROUP_VERSION),
  kind: z.literal(SER_KIND),
  metadata: metadataSchema,
  spec: staticExportReleaseSpecSchema,
  status: staticExportReleaseStatusSchema.optional(),
});

export type StaticExportReleaseSpec = z.output<typeof staticExportReleaseSpecSchema>;
export type StaticExportReleaseStatus = z.output<typeof staticExportReleaseStatusSchema>;
export type StaticExportRelease = z.output<typeof staticExportReleaseSchema>;

export const staticExportReleaseCrd = {
  kind: SER_KIND,
  plural: SER_PLURAL,
  singular: 'staticexportrelease',
  description:
    'Keeps a self-hosted documentation site serving the latest static export of a hosted docs site: exports it, verifies the bundle, writes its link and content version to the target, rolls the serving workloads and renews the link before it expires. Inside an air gap it follows site images in an OCI registry instead (spec.source.oci).',
  shortNames: ['ser'],
  spec: staticExportReleaseSpecSchema,
  status: staticExportReleaseStatusSchema,
  printerColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    { name: 'Version', type: 'string', jsonPath: '.status.current.version', priority: 1 },
    // A future time in a date column prints <invalid> (kubectl shows ages): show the timestamp.
    { name: 'Renewal', type: 'string', jsonPath: '.status.current.renewalTime', priority: 1 },
    { name: 'Domain', type: 'string', jsonPath: '.spec.domain', priority: 1 },
    { name: 'Project', type: 'string', jsonPath: '.spec.projectId', priority: 1 },
    { name: 'Repository', type: 'string', jsonPath: '.spec.source.oci.repository', priority: 1 },
  ],
} as const;
